// The process side of `gb10tune launch` and `gb10tune stop`: the launch lock, the pid file,
// starting llama-server detached and waiting for it to become ready, and stopping it without
// ever signalling a process that launch did not start.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/http/http_client.hpp"
#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/launch/load_progress.hpp"
#include "gb10tune/launch/start_failure.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/file_lock.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// Held from before the memory check until the server is ready (or launch fails), so that two
// launches cannot race for one memory pool: an exclusive flock on paths.lock (created 0600,
// never through a symlink, not inherited by the server). Movable; released on destruction.
class LaunchLock {
 public:
  // Creates the state directory (0700) if needed and takes the lock without waiting. An Error
  // (ExitCode::failed) naming the holder's pid when another launch holds it, or naming the
  // lock file when it cannot be opened.
  static Expected<LaunchLock> acquire(const StatePaths& paths);

  const std::filesystem::path& path() const { return m_lock.path(); }

 private:
  explicit LaunchLock(platform::FileLock lock) : m_lock(std::move(lock)) {}
  platform::FileLock m_lock;
};

// A server that launch started and that still runs.
struct RunningServer {
  int pid = 0;
  LaunchRecord record;
};

// What the pid file says.
enum class PidFileState {
  none,     // no pid file: nothing was launched, or it was stopped
  running,  // the recorded server runs (pid, start time and executable all match)
  stale,    // a pid file whose process is gone or whose pid now belongs to another program
};

// The answer of check_pid_file.
struct PidFileStatus {
  PidFileState state = PidFileState::none;
  std::optional<RunningServer> server;  // set when running
  int pid = 0;                          // the pid file's pid, 0 when none or unreadable
  std::string why;  // for stale, in plain words: "pid 123 now belongs to /usr/bin/vim"
};

// Reads the pid file and the launch record (trust::read_private_file: the caller's, writable by
// no one else) and checks /proc/<pid> (stat start time and exe, under `root`) against the
// record. Never fails: an unreadable or untrusted pid file or record, a record for another pid, a
// vanished process or a reused pid are all `stale`, with the reason.
PidFileStatus check_pid_file(const platform::Sysroot& root, const StatePaths& paths);

// Removes the pid file and the launch record (after a stale check or a stop). Missing files
// are fine.
void clear_launch_state(const StatePaths& paths);

// The server a start replaces (watch's restart of one that exited): its pid and stat start time.
struct ReplacedServer {
  int pid = 0;
  std::uint64_t start_time_ticks = 0;
};

// Everything start_server needs.
struct StartRequest {
  std::vector<std::string> argv;  // argv[0] = absolute path of llama-server
  platform::Environment env;      // the child's whole environment
  StatePaths paths;
  http::Url url;                                                 // where to poll /health
  std::chrono::milliseconds timeout = std::chrono::minutes(10);  // restarts on log progress
  // When set, replaces the /health poll for a server that speaks no HTTP (the RPC worker):
  // true once it answers as ready. Asked once before the start too: true then means the port
  // is taken by someone else.
  std::function<bool()> ready_check;
  // While this server still exists (its pid with this start time, a zombie too), a taken port
  // is its own, still being let go: the start waits up to `port_wait` for it. Any other holder
  // of the port is refused at once.
  std::optional<ReplacedServer> replaces;
  std::chrono::milliseconds port_wait = std::chrono::seconds(30);
  // Written as given, except: pid, start_time_ticks and server_path (the executable as the
  // kernel resolved it) are set here, and empty argv, url, log_path, launched_at and
  // gb10tune_version are filled in.
  LaunchRecord record;
};

// A server that answered /health with 200.
struct StartResult {
  int pid = 0;
  std::uint64_t start_time_ticks = 0;
  std::chrono::milliseconds to_ready{0};  // from the spawn to the first /health 200
};

// Where a start stands while it waits for the server.
struct StartProgress {
  LoadProgress load;                     // what the server's log shows
  std::chrono::milliseconds elapsed{0};  // since the spawn
  std::chrono::milliseconds timeout{0};  // the wait without log output that ends it
};

// Receives the progress of a start: when what the log shows changes, and about every second.
using ProgressFn = std::function<void(const StartProgress& progress)>;

// Starts the server and waits until it is ready. The server runs from the argv vector (never a
// shell) in its own session, stdin /dev/null, stdout and stderr appended to paths.log after a
// header line with the date and the argv; the pid file and the record (with pid and start
// time) are written at once. Then /health is polled every ~50 ms while the child is watched
// and the log read for progress; the timeout restarts whenever the log grows. A port that
// already answers HTTP is refused before anything starts.
// On failure the Error's message holds the classification, the cause with its fix and the
// last log lines; the child is stopped if still alive and the pid file and record removed;
// the code is ExitCode::server_failed, or ExitCode::interrupted once `interrupted` is true.
// A binary that may not run (trust::check_binary: another user's, or one others could
// replace) is refused before anything else, with ExitCode::usage; one that may is executed at
// its real path (symlinks resolved), the log and the record keeping the argv as given.
Expected<StartResult> start_server(const StartRequest& request, const ProgressFn& progress,
                                   const std::atomic<bool>& interrupted);

// How a stop went.
struct StopResult {
  int pid = 0;
  bool killed = false;  // SIGTERM was not enough: SIGKILL was needed
  std::chrono::milliseconds took{0};
};

// Stops the server that launch started: opens the process, re-checks that it is still the
// recorded server (stat start time and exe), SIGTERM, waits up to `grace`, SIGKILL. Removes
// the pid file and record, and the lock when no launch holds it, and notes the stop in the
// log as done by `by` ("stop", "watch", "rpc stop"). An Error (ExitCode::failed) when nothing
// recorded runs (the pid file is stale or absent: nothing is signalled then) or the signal is
// not permitted.
Expected<StopResult> stop_server(const platform::Sysroot& root, const StatePaths& paths,
                                 std::chrono::milliseconds grace, std::string_view by = "stop");

// Stops process `pid` only if its stat start time is still `start_time_ticks` (checked after
// opening it, so a reused pid is never signalled): SIGTERM, `grace`, SIGKILL. An Error naming
// the pid when it is gone, no longer the same process, or may not be signalled. For
// `stop --all`, which lists processes first and stops them after.
Expected<StopResult> stop_process(const platform::Sysroot& root, int pid,
                                  std::uint64_t start_time_ticks, std::chrono::milliseconds grace);

}  // namespace gb10tune::launch
