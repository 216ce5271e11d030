// One process under /proc/<pid>: identity (stat, exe, cmdline), environment and memory,
// read under a Sysroot. Used by verify (is the server on the fast path?) and stop (is this
// pid still the server we started?).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::sys {

// Why a /proc/<pid> file could not be used.
enum class ProcFailure {
  vanished,           // ENOENT, ESRCH: the process exited (or never existed)
  permission_denied,  // EACCES, EPERM: another user's process; root may read it
  malformed,          // read, but not in the kernel's format
  other,              // any other OS error
};

// A failed /proc read: the kind, and a message naming the file and the reason.
struct ProcError {
  ProcFailure failure = ProcFailure::other;
  std::string message;
};

// A T or a ProcError. Dereferencing a ProcResult that holds an error is a bug.
template <class T>
class [[nodiscard]] ProcResult {
 public:
  ProcResult(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
  ProcResult(ProcError error) : m_state(std::in_place_index<1>, std::move(error)) {}

  bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }
  const T& value() const& { return std::get<0>(m_state); }
  T&& value() && { return std::get<0>(std::move(m_state)); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  const ProcError& error() const { return std::get<1>(m_state); }

 private:
  std::variant<T, ProcError> m_state;
};

// The fields of /proc/<pid>/stat that tell a process apart.
struct ProcessStat {
  int pid = 0;
  std::string comm;  // the kernel's name (≤ 15 bytes; may hold spaces and parentheses)
  char state = '?';  // R, S, D, T, Z (zombie), X (dead), I, …
  int ppid = 0;
  std::uint64_t start_time_ticks = 0;  // field 22: clock ticks after boot; with pid, a
                                       // process identity that survives pid reuse

  // True for a process that has exited and not been reaped (Z) or is being torn down (X).
  bool exited() const { return state == 'Z' || state == 'X'; }
};

// Parses the text of /proc/<pid>/stat. comm is taken between the first '(' and the LAST ')'
// (a name may contain ") ("); malformed text (no parentheses, fewer than 22 fields, a field
// that is not a number) is a ProcError naming `source`.
ProcResult<ProcessStat> parse_process_stat(std::string_view text, std::string_view source);

// Reads /proc/<pid>/stat under `root`.
ProcResult<ProcessStat> read_process_stat(const platform::Sysroot& root, int pid);

// The executable of a process, from the /proc/<pid>/exe link.
struct ProcessExe {
  std::string path;      // absolute path, without the kernel's " (deleted)" suffix
  bool deleted = false;  // the file was replaced or removed after the process started

  // The file name of `path` ("llama-server").
  std::string basename() const;
};

// Reads the /proc/<pid>/exe link's text without following it (in a captured tree the
// target need not exist here). Zombies and kernel threads have none: vanished.
ProcResult<ProcessExe> read_process_exe(const platform::Sysroot& root, int pid);

// Splits NUL-separated text (/proc/<pid>/cmdline, environ) into its strings; a missing
// final NUL is tolerated.
std::vector<std::string> split_nul(std::string_view text);

// argv of a process from /proc/<pid>/cmdline; empty for zombies and kernel threads.
ProcResult<std::vector<std::string>> read_process_cmdline(const platform::Sysroot& root, int pid);

// The environment a process started with, from /proc/<pid>/environ. Permission denied
// (another user's process, read without root) and vanished are distinct failures, so that a
// caller can say "run with sudo" rather than pass an environment it could not see.
ProcResult<platform::Environment> read_process_environ(const platform::Sysroot& root, int pid);

// Resident memory of a process, in bytes.
struct ProcessMemory {
  std::uint64_t vm_rss = 0;             // VmRSS: everything resident
  std::uint64_t rss_anon = 0;           // RssAnon: anonymous pages (heap, managed memory on GB10)
  std::uint64_t rss_file = 0;           // RssFile: file-backed pages (an mmap-loaded model)
  std::uint64_t rss_shmem = 0;          // RssShmem: shared memory
  std::string source;                   // the file the figures come from
  std::optional<std::uint64_t> vm_hwm;  // VmHWM: the most resident so far; nullopt: not read
  std::uint64_t vm_pte = 0;  // VmPTE: its page tables (kernel memory freed with it; status only)
};

// Parses the Vm/Rss lines of /proc/<pid>/status; a ProcError naming `source` when VmRSS or
// RssAnon is missing (kernels before 4.5 have no RssAnon).
ProcResult<ProcessMemory> parse_status_memory(std::string_view text, std::string_view source);

// Parses /proc/<pid>/smaps_rollup: Rss, Anonymous and Pss_Shmem-free file pages
// (rss_file = Rss − Anonymous − shmem); a ProcError naming `source` when Rss is missing.
ProcResult<ProcessMemory> parse_smaps_rollup_memory(std::string_view text, std::string_view source);

// Reads the memory of a process: /proc/<pid>/status first (its counters cost nothing, where
// smaps_rollup walks every page table of a 100 GB process), smaps_rollup when status has no
// Rss* lines.
ProcResult<ProcessMemory> read_process_memory(const platform::Sysroot& root, int pid);

// How a process found by name relates to llama-server.
enum class CandidateKind {
  server,   // its executable is llama-server (or could not be read: another user's process)
  script,   // named llama-server, but its executable is a shell or interpreter
  foreign,  // named llama-server, but its executable is another program
  exited,   // a zombie: it has exited and its parent has not reaped it
  other,    // its executable is unreadable and neither argv[0] nor comm names llama-server
};

// "server", "script", "foreign", "exited", "other".
std::string_view candidate_kind_name(CandidateKind kind);

// A process that carries the name llama-server, with what it really is.
struct ServerCandidate {
  ProcessStat stat;
  std::optional<ProcessExe> exe;  // nullopt when the link could not be read
  std::optional<ProcError> exe_error;
  std::vector<std::string> argv;   // empty when unreadable or for a zombie
  std::optional<std::string> cwd;  // the /proc/<pid>/cwd link's text; nullopt when unreadable
  std::string matched_by;          // "exe", "argv[0]", "comm", or "pid" (asked for by number)
  CandidateKind kind = CandidateKind::server;
};

// The llama-server name: an executable, argv[0] or comm equal to it counts.
inline constexpr std::string_view kServerName = "llama-server";

// Reads stat, exe and cmdline of `pid` and classifies it against llama-server (matched_by
// "pid"). A ProcError when /proc/<pid>/stat cannot be read (the process is gone).
ProcResult<ServerCandidate> inspect_process(const platform::Sysroot& root, int pid);

// Every process whose executable basename, argv[0] basename or comm is llama-server, found by
// scanning /proc (never by command-line text, which also matches editors and shells), in pid
// order. Scripts, foreign programs and zombies carrying the name are returned too, with their
// kind, so that callers can say why they were not checked. Processes that vanish while
// scanning are skipped.
std::vector<ServerCandidate> find_llama_servers(const platform::Sysroot& root);

// True when `candidate` is a running llama-server: its executable is llama-server (or cannot be
// read while argv[0] or comm say so) and it has not exited (a zombie, state Z, or a dead
// process, X, is none; it holds no memory and answers nothing). The one test of "a llama-server
// is running" for bench, verify, stop and bench server.
bool is_running_server(const ServerCandidate& candidate);

// The running llama-servers (is_running_server) among find_llama_servers(root), in pid order.
std::vector<ServerCandidate> find_running_servers(const platform::Sysroot& root);

}  // namespace gb10tune::sys
