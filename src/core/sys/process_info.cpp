#include "gb10tune/sys/process_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/platform/proc_files.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::sys {

namespace {

std::string proc_path(int pid, std::string_view file) {
  return fmt::format("/proc/{}/{}", pid, file);
}

ProcFailure failure_of(int error) {
  switch (error) {
    case ENOENT:
    case ESRCH:
      return ProcFailure::vanished;
    case EACCES:
    case EPERM:
      return ProcFailure::permission_denied;
    default:
      return ProcFailure::other;
  }
}

// The error of a failed raw read of machine path `path` (messages name the machine's path, not
// where a captured tree keeps it). "Run with sudo" is no advice to root on the live machine:
// there a denial means the kernel protects the process from root too (another container's
// process, or ptrace restrictions).
ProcError error_of(const platform::Sysroot& root, const platform::RawRead& read,
                   std::string_view path, std::string_view what) {
  ProcError error;
  error.failure = failure_of(read.error);
  switch (error.failure) {
    case ProcFailure::vanished:
      error.message = fmt::format("cannot read {}: {} (the process has exited)", path,
                                  std::strerror(read.error));
      break;
    case ProcFailure::permission_denied:
      if (root.is_live() && platform::current_uid() == 0) {
        error.message = fmt::format(
            "cannot read {}: {} (even root may not read its {}: the process is protected by the "
            "kernel, e.g. it belongs to another container)",
            path, std::strerror(read.error), what);
      } else {
        error.message = fmt::format(
            "cannot read {}: {} (the process belongs to another user; run with sudo to read its "
            "{})",
            path, std::strerror(read.error), what);
      }
      break;
    default:
      error.message = fmt::format("cannot read {}: {}", path, std::strerror(read.error));
      break;
  }
  return error;
}

ProcError malformed(std::string_view source, std::string_view why) {
  return ProcError{ProcFailure::malformed, fmt::format("{}: {}", source, why)};
}

std::string_view basename_of(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Interpreters a script named llama-server runs under (its exe is the interpreter).
bool is_interpreter(std::string_view name) {
  constexpr std::array<std::string_view, 14> kShells{"sh",   "bash", "dash",    "zsh",  "ksh",
                                                     "mksh", "fish", "busybox", "env",  "perl",
                                                     "ruby", "node", "lua",     "tclsh"};
  for (std::string_view shell : kShells) {
    if (name == shell) {
      return true;
    }
  }
  return starts_with(name, "python") || starts_with(name, "perl");
}

// "VmRSS:   123 kB" → bytes; nullopt when the line holds no number.
std::optional<std::uint64_t> kib_value(std::string_view rest) {
  const auto words = split_words(rest);
  if (words.empty()) {
    return std::nullopt;
  }
  const auto value = parse_u64(words[0]);
  if (!value || *value > (~0ULL >> 10)) {
    return std::nullopt;
  }
  return *value * 1024;
}

CandidateKind classify(const ServerCandidate& candidate) {
  if (candidate.stat.exited()) {
    return CandidateKind::exited;
  }
  if (!candidate.exe) {
    // An unreadable link (another user's process, or one root may not trace): the readable
    // cmdline and comm still tell whether it is a llama-server at all.
    const bool named = candidate.stat.comm == kServerName ||
                       (!candidate.argv.empty() && basename_of(candidate.argv[0]) == kServerName);
    return named ? CandidateKind::server : CandidateKind::other;
  }
  const std::string exe = candidate.exe->basename();
  if (exe == kServerName) {
    return CandidateKind::server;
  }
  return is_interpreter(exe) ? CandidateKind::script : CandidateKind::foreign;
}

}  // namespace

ProcResult<ProcessStat> parse_process_stat(std::string_view text, std::string_view source) {
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return malformed(source, "no '(comm)' field");
  }
  ProcessStat stat;
  const auto pid = parse_u64(trim(text.substr(0, open)));
  if (!pid || *pid == 0 || *pid > 0x7fffffff) {
    return malformed(source, "the pid field is not a number");
  }
  stat.pid = static_cast<int>(*pid);
  stat.comm = std::string(text.substr(open + 1, close - open - 1));
  // Fields from 3 (state) on follow the last ')'.
  const auto fields = split_words(text.substr(close + 1));
  constexpr std::size_t kStartTime = 22 - 3;
  if (fields.size() <= kStartTime) {
    return malformed(source, fmt::format("{} fields after the name, expected at least {}",
                                         fields.size(), kStartTime + 1));
  }
  if (fields[0].size() != 1) {
    return malformed(source, fmt::format("state '{}' is not one letter", fields[0]));
  }
  stat.state = fields[0][0];
  const auto ppid = parse_u64(fields[1]);
  const auto start = parse_u64(fields[kStartTime]);
  if (!ppid || *ppid > 0x7fffffff || !start) {
    return malformed(source, "ppid or start time is not a number");
  }
  stat.ppid = static_cast<int>(*ppid);
  stat.start_time_ticks = *start;
  return stat;
}

ProcResult<ProcessStat> read_process_stat(const platform::Sysroot& root, int pid) {
  const std::string path = proc_path(pid, "stat");
  const platform::RawRead read = platform::read_raw(root, path, 4096);
  if (!read.ok()) {
    return error_of(root, read, path, "status");
  }
  return parse_process_stat(read.content, path);
}

std::string ProcessExe::basename() const {
  return std::string(basename_of(path));
}

ProcResult<ProcessExe> read_process_exe(const platform::Sysroot& root, int pid) {
  const std::string path = proc_path(pid, "exe");
  const platform::RawRead link = platform::read_link_raw(root, path);
  if (!link.ok()) {
    return error_of(root, link, path, "executable");
  }
  ProcessExe exe;
  exe.path = link.content;
  constexpr std::string_view kDeleted = " (deleted)";
  if (exe.path.size() > kDeleted.size() &&
      std::string_view(exe.path).substr(exe.path.size() - kDeleted.size()) == kDeleted) {
    exe.path.resize(exe.path.size() - kDeleted.size());
    exe.deleted = true;
  }
  return exe;
}

std::vector<std::string> split_nul(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const std::size_t nul = text.find('\0');
    out.emplace_back(text.substr(0, nul));
    if (nul == std::string_view::npos) {
      break;
    }
    text.remove_prefix(nul + 1);
  }
  return out;
}

ProcResult<std::vector<std::string>> read_process_cmdline(const platform::Sysroot& root, int pid) {
  const std::string path = proc_path(pid, "cmdline");
  const platform::RawRead read = platform::read_raw(root, path);
  if (!read.ok()) {
    return error_of(root, read, path, "command line");
  }
  return split_nul(read.content);
}

ProcResult<platform::Environment> read_process_environ(const platform::Sysroot& root, int pid) {
  const std::string path = proc_path(pid, "environ");
  const platform::RawRead read = platform::read_raw(root, path);
  if (!read.ok()) {
    return error_of(root, read, path, "environment");
  }
  platform::Environment env;
  for (const std::string& entry : split_nul(read.content)) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      continue;
    }
    env.set(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

namespace {

// One "Key:   1234 kB" field of a /proc memory file and where its value goes.
struct KibField {
  std::string_view key;
  std::uint64_t* target;
};

// Reads the `fields` of `text` (other lines are passed over); the keys found, or an Error for a
// listed field whose value is not a size in kB.
ProcResult<std::vector<std::string_view>> read_kib_fields(std::string_view text,
                                                          std::string_view source,
                                                          const std::vector<KibField>& fields) {
  std::vector<std::string_view> found;
  for (std::string_view line : split(text, '\n')) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    const std::string_view key = line.substr(0, colon);
    const auto field =
        std::find_if(fields.begin(), fields.end(), [&](const KibField& f) { return f.key == key; });
    if (field == fields.end()) {
      continue;
    }
    const auto value = kib_value(line.substr(colon + 1));
    if (!value) {
      return malformed(source, fmt::format("'{}' is not a size in kB", trim(line)));
    }
    *field->target = *value;
    found.push_back(field->key);
  }
  return found;
}

bool has_key(const std::vector<std::string_view>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

}  // namespace

ProcResult<ProcessMemory> parse_status_memory(std::string_view text, std::string_view source) {
  ProcessMemory memory;
  memory.source = std::string(source);
  std::uint64_t hwm = 0;
  const auto found = read_kib_fields(text, source,
                                     {{"VmRSS", &memory.vm_rss},
                                      {"RssAnon", &memory.rss_anon},
                                      {"RssFile", &memory.rss_file},
                                      {"RssShmem", &memory.rss_shmem},
                                      {"VmPTE", &memory.vm_pte},
                                      {"VmHWM", &hwm}});
  if (!found) {
    return found.error();
  }
  if (!has_key(*found, "VmRSS") || !has_key(*found, "RssAnon")) {
    return malformed(source, "no VmRSS/RssAnon lines (a zombie, or a kernel before 4.5)");
  }
  if (has_key(*found, "VmHWM")) {
    memory.vm_hwm = hwm;
  }
  return memory;
}

ProcResult<ProcessMemory> parse_smaps_rollup_memory(std::string_view text,
                                                    std::string_view source) {
  ProcessMemory memory;
  memory.source = std::string(source);
  const auto found = read_kib_fields(
      text, source,
      {{"Rss", &memory.vm_rss},
       {"Anonymous", &memory.rss_anon},
       {"Pss_Shmem", &memory.rss_shmem}});  // Pss, the closest figure smaps_rollup has
  if (!found) {
    return found.error();
  }
  if (!has_key(*found, "Rss")) {
    return malformed(source, "no Rss line");
  }
  const std::uint64_t accounted = memory.rss_anon + memory.rss_shmem;
  memory.rss_file = memory.vm_rss > accounted ? memory.vm_rss - accounted : 0;
  return memory;
}

ProcResult<ProcessMemory> read_process_memory(const platform::Sysroot& root, int pid) {
  const std::string status_path = proc_path(pid, "status");
  const platform::RawRead status = platform::read_raw(root, status_path, 64 * 1024);
  if (!status.ok()) {
    return error_of(root, status, status_path, "memory figures");
  }
  auto memory = parse_status_memory(status.content, status_path);
  if (memory) {
    return memory;
  }
  const std::string rollup_path = proc_path(pid, "smaps_rollup");
  const platform::RawRead rollup = platform::read_raw(root, rollup_path, 8192);
  if (!rollup.ok()) {
    return memory;  // the status error says more than "no smaps_rollup"
  }
  return parse_smaps_rollup_memory(rollup.content, rollup_path);
}

std::string_view candidate_kind_name(CandidateKind kind) {
  switch (kind) {
    case CandidateKind::server:
      return "server";
    case CandidateKind::script:
      return "script";
    case CandidateKind::foreign:
      return "foreign";
    case CandidateKind::exited:
      return "exited";
    case CandidateKind::other:
      return "other";
  }
  return "server";
}

ProcResult<ServerCandidate> inspect_process(const platform::Sysroot& root, int pid) {
  auto stat = read_process_stat(root, pid);
  if (!stat) {
    return stat.error();
  }
  ServerCandidate candidate;
  candidate.stat = std::move(stat).value();
  candidate.matched_by = "pid";
  if (auto exe = read_process_exe(root, pid)) {
    candidate.exe = std::move(exe).value();
  } else {
    candidate.exe_error = exe.error();
  }
  if (auto argv = read_process_cmdline(root, pid)) {
    candidate.argv = std::move(argv).value();
  }
  if (const platform::RawRead cwd = platform::read_link_raw(root, proc_path(pid, "cwd"));
      cwd.ok()) {
    candidate.cwd = cwd.content;
  }
  candidate.kind = classify(candidate);
  return candidate;
}

std::vector<ServerCandidate> find_llama_servers(const platform::Sysroot& root) {
  std::vector<ServerCandidate> found;
  const auto entries = root.list_dir("/proc");
  if (!entries) {
    return found;
  }
  std::vector<int> pids;
  pids.reserve(entries->size());
  for (const std::string& entry : *entries) {
    const auto pid = parse_u64(entry);
    if (pid && *pid != 0 && *pid <= 0x7fffffff) {
      pids.push_back(static_cast<int>(*pid));
    }
  }
  std::sort(pids.begin(), pids.end());
  for (const int pid : pids) {
    auto candidate = inspect_process(root, pid);
    if (!candidate) {
      continue;  // gone while scanning
    }
    if (candidate->exe && candidate->exe->basename() == kServerName) {
      found.push_back(std::move(candidate).value());
      found.back().matched_by = "exe";
    } else if (!candidate->argv.empty() && basename_of(candidate->argv[0]) == kServerName) {
      found.push_back(std::move(candidate).value());
      found.back().matched_by = "argv[0]";
    } else if (candidate->stat.comm == kServerName) {
      found.push_back(std::move(candidate).value());
      found.back().matched_by = "comm";
    }
  }
  return found;
}

bool is_running_server(const ServerCandidate& candidate) {
  return candidate.kind == CandidateKind::server && !candidate.stat.exited();
}

std::vector<ServerCandidate> find_running_servers(const platform::Sysroot& root) {
  std::vector<ServerCandidate> running;
  for (ServerCandidate& candidate : find_llama_servers(root)) {
    if (is_running_server(candidate)) {
      running.push_back(std::move(candidate));
    }
  }
  return running;
}

}  // namespace gb10tune::sys
