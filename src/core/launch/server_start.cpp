// start_server: spawn llama-server detached, record it, and wait for /health.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gb10tune/http/server_api.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/platform/log_file.hpp"
#include "gb10tune/platform/port_probe.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/binary_trust.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/shell_quote.hpp"
#include "gb10tune/version.hpp"
#include "start_checks.hpp"

namespace gb10tune::launch {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kPollInterval{50};
constexpr milliseconds kPollIntervalLoaded{10};  // the log says loaded: 200 is imminent
constexpr milliseconds kHealthTimeout{1000};
constexpr milliseconds kStopGrace{5000};
constexpr std::size_t kTailLines = 20;
constexpr std::size_t kMaxScan = 1 << 20;  // log bytes examined per poll, at most

std::string iso_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// The size of `path`, 0 when it cannot be read.
std::uintmax_t size_of(const fs::path& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

// Bytes [from, end) of `path`, at most the last `max` of them.
std::string read_from(const fs::path& path, std::uintmax_t from, std::size_t max) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return {};
  }
  const std::uintmax_t size = size_of(path);
  if (size <= from) {
    return {};
  }
  const std::uintmax_t start = size - from > max ? size - max : from;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(static_cast<std::size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::string describe_exit(const platform::ChildExit& exit) {
  if (exit.signal != 0) {
    return fmt::format("it was killed by signal {} ({})", exit.signal, ::strsignal(exit.signal));
  }
  return fmt::format("it exited with status {}", exit.exit_status);
}

// What stopping a server that failed to start came to.
std::string stop_words(const platform::ChildExit& exit, int pid) {
  if (exit.still_running) {
    return fmt::format(
        "the server (pid {}) did not end even on SIGKILL (stuck in the kernel: a "
        "driver or a file system?); see `ps -o pid,stat,wchan -p {}`",
        pid, pid);
  }
  return "the server was stopped";
}

std::string seconds(milliseconds ms) {
  return fmt::format("{:.1f} s", static_cast<double>(ms.count()) / 1000.0);
}

// What the log says about loading, from the text of this start (read in chunks).
class LogWatcher {
 public:
  LogWatcher(fs::path path, std::uintmax_t start)
      : m_path(std::move(path)), m_start(start), m_seen(start) {}

  // Reads what was appended since the last call; true when the log grew.
  bool update() {
    const std::uintmax_t size = size_of(m_path);
    if (size <= m_seen) {
      return false;
    }
    m_reader.feed(read_from(m_path, m_seen, kMaxScan));
    m_seen = size;
    return true;
  }

  bool loaded() const { return m_reader.progress().stage == LoadStage::loaded; }
  const LoadProgress& progress() const { return m_reader.progress(); }

  // The text of this start (at most the last `max` bytes).
  std::string text(std::size_t max = 64 * 1024) const { return read_from(m_path, m_start, max); }

 private:
  fs::path m_path;
  std::uintmax_t m_start = 0;
  std::uintmax_t m_seen = 0;
  LoadLogReader m_reader;
};

// The address llama-server will bind: the last --host and --port of its argv (what it parses),
// else the URL's.
std::pair<std::string, int> listen_address(const StartRequest& request) {
  std::string host = request.url.host;
  int port = request.url.port;
  for (std::size_t i = 1; i + 1 < request.argv.size(); ++i) {
    if (request.argv[i] == "--host") {
      host = request.argv[i + 1];
    } else if (request.argv[i] == "--port") {
      try {
        port = std::stoi(request.argv[i + 1]);
      } catch (const std::exception&) {
        // llama-server refuses it itself, with its own message
      }
    }
  }
  return {host, port};
}

// Whether the server this start replaces still exists (a zombie too).
bool replaced_exists(const StartRequest& request) {
  if (!request.replaces) {
    return false;
  }
  const auto stat = sys::read_process_stat(platform::Sysroot(), request.replaces->pid);
  return stat && stat->start_time_ticks == request.replaces->start_time_ticks;
}

// The program a start runs, by name: llama-server, or an RPC worker's rpc-server.
std::string program_name(const StartRequest& request) {
  return request.argv.empty() ? std::string(sys::kServerName)
                              : fs::path(request.argv.front()).filename().string();
}

// The refusal of a start whose port is taken: nothing was started.
Error port_taken(const StartRequest& request, const std::string& host, int port,
                 const std::string& holder) {
  return Error{fmt::format("{} was not started: port in use ({} is taken{}); nothing was "
                           "started. Stop what holds it (`ss -ltnp 'sport = :{}'` names it; "
                           "`gb10tune stop` or `gb10tune rpc stop` for what gb10tune started) "
                           "or choose another --port.",
                           program_name(request), format_host_port(host, port), holder, port),
               ExitCode::not_started};
}

// Binds the server's address as it will (platform::probe_port): a port taken by the server this
// start replaces is waited for up to request.port_wait while that server still exists; taken
// by anyone else, the start is refused at once.
Status check_port(const StartRequest& request) {
  const auto [host, port] = listen_address(request);
  if (host.ends_with(".sock") || port == 0) {
    return {};  // a UNIX socket, or any free port: nothing to take
  }
  const auto deadline = Clock::now() + request.port_wait;
  for (;;) {
    const auto state = platform::probe_port(host, port);
    if (!state) {
      return Error{fmt::format("{} was not started: {}; nothing was started. Give --host an "
                               "address of this machine and --port a free port (1024 or above).",
                               program_name(request), state.error().message),
                   ExitCode::not_started};
    }
    if (*state == platform::PortState::free) {
      return {};
    }
    if (!replaced_exists(request)) {
      return port_taken(request, host, port, "");
    }
    if (Clock::now() >= deadline) {
      return port_taken(
          request, host, port,
          fmt::format(" by pid {}, the server this start replaces, still shutting down after {} s",
                      request.replaces->pid,
                      std::chrono::duration_cast<std::chrono::seconds>(request.port_wait).count()));
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
}

}  // namespace

namespace detail {

std::string start_header(const std::vector<std::string>& argv) {
  return fmt::format("==== {} {} launch at {}: {}\n", kToolName, kToolVersion, iso_now(),
                     shell_join(argv));
}

// Builds the Error of a failed start; `log_text` is what this start logged.
Error failure_error(StartFailure failure, const std::string& how, const std::string& evidence,
                    const std::string& log_text, const fs::path& log_path) {
  std::string message = fmt::format("llama-server did not become ready: {} ({}).\n{}",
                                    failure_name(failure), how, failure_advice(failure));
  if (!evidence.empty()) {
    message += fmt::format("\nCause: {}", evidence);
  }
  const std::string tail = last_lines(log_text, kTailLines);
  if (!tail.empty()) {
    message += fmt::format("\nLast lines of {}:", log_path.string());
    std::size_t start = 0;
    while (start <= tail.size()) {
      const std::size_t end = tail.find('\n', start);
      message +=
          "\n  " + tail.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (end == std::string::npos) {
        break;
      }
      start = end + 1;
    }
  } else {
    message += fmt::format("\nThe server wrote nothing to {}.", log_path.string());
  }
  return Error{std::move(message), failure == StartFailure::interrupted ? ExitCode::interrupted
                                                                        : ExitCode::server_failed};
}

Expected<std::vector<std::string>> checked_start(const StartRequest& request) {
  const StatePaths& paths = request.paths;
  if (request.argv.empty() || request.argv[0].empty() || request.argv[0].front() != '/') {
    return Error{"internal: start_server needs argv[0] to be the absolute path of llama-server",
                 ExitCode::failed};
  }
  // The binary that was checked is the one executed: a symlink re-pointed meanwhile is not
  // followed again.
  const auto verdict = trust::check_binary(request.argv[0]);
  if (!verdict) {  // missing, or unreadable: it cannot be started
    return failure_error(StartFailure::spawn_failed, verdict.error().message, "", "", paths.log);
  }
  if (!verdict->may_run) {
    return trust::refusal(*verdict);
  }
  std::vector<std::string> argv = request.argv;
  argv[0] = verdict->path;
  if (const Status dir = trust::ensure_private_dir(paths.log.parent_path()); !dir) {
    return dir.error();
  }

  // The port must be free before the start: llama-server's own bind failure shows late, and
  // not always in its log.
  if (Status port = check_port(request); !port) {
    return port.error();
  }
  // A port that already answers HTTP belongs to someone else: its /health would look like ours.
  if (request.ready_check) {
    if (request.ready_check()) {
      return port_taken(request, request.url.host, request.url.port,
                        ": something already answers there");
    }
  } else if (const auto answer = http::http_get(request.url, "/health", milliseconds(300))) {
    return port_taken(
        request, request.url.host, request.url.port,
        fmt::format(": a server already answers HTTP there with status {}", answer->status));
  }
  return argv;
}

Status save_started(const StartRequest& request, int pid, const std::string& executable,
                    LaunchRecord& record) {
  record.pid = pid;
  if (const auto stat = sys::read_process_stat(platform::Sysroot(), pid)) {
    record.start_time_ticks = stat->start_time_ticks;
  }
  if (!executable.empty()) {
    record.server_path = executable;
  } else if (record.server_path.empty()) {
    record.server_path = request.argv[0];
  }
  if (record.argv.empty()) {
    record.argv = request.argv;
  }
  if (record.url.empty()) {
    record.url = request.url.to_string();
  }
  if (record.launched_at.empty()) {
    record.launched_at = iso_now();
  }
  if (record.gb10tune_version.empty()) {
    record.gb10tune_version = std::string(kToolVersion);
  }
  if (Status saved = platform::write_file_atomic(request.paths.pid_file, fmt::format("{}\n", pid));
      !saved) {
    return saved;
  }
  return write_launch_record(request.paths.record, record);
}

}  // namespace detail

using detail::failure_error;

namespace {

// The failure of a server that exited while it started: what its log says, or the kernel's
// out-of-memory killer for a SIGKILL nobody here sent.
Error exited_error(const StatePaths& paths, const platform::ChildExit& exit,
                   const std::string& text, milliseconds elapsed) {
  StartFailure failure = classify_failure(text, false);
  std::string how = fmt::format("{} after {}", describe_exit(exit), seconds(elapsed));
  std::string evidence = failure_evidence(text, failure);
  if (failure == StartFailure::crashed && exit.signal == SIGKILL) {
    // Nobody here sent it: on a machine out of memory the kernel's OOM killer does.
    failure = StartFailure::out_of_memory;
    evidence =
        "killed by SIGKILL, most likely by the kernel's out-of-memory killer (see `journalctl "
        "-k | grep -i oom`)";
  }
  platform::append_line(paths.log, fmt::format("==== {} launch: llama-server exited: {}", kToolName,
                                               failure_name(failure)));
  clear_launch_state(paths);
  return failure_error(failure, how, evidence, text, paths.log);
}

// Waits until the started server answers ready (the request's check, or /health and its log),
// or fails: interrupted, exited, no progress before the timeout. The time to ready.
Expected<milliseconds> wait_until_ready(const StartRequest& request, platform::Child& child,
                                        LogWatcher& log, Clock::time_point spawned_at,
                                        const ProgressFn& progress,
                                        const std::atomic<bool>& interrupted) {
  const StatePaths& paths = request.paths;
  const int pid = child.pid();
  const auto fail = [&](StartFailure failure, std::string how) -> Error {
    std::optional<platform::ChildExit> exit = child.poll();
    if (!exit) {
      exit = child.terminate(kStopGrace);
      how += "; " + stop_words(*exit, pid);
    }
    const std::string text = log.text();
    std::string evidence = failure_evidence(text, failure);
    platform::append_line(
        paths.log, fmt::format("==== {} launch: llama-server did not become ready: {}", kToolName,
                               failure_name(failure)));
    clear_launch_state(paths);
    return failure_error(failure, how, evidence, text, paths.log);
  };

  auto deadline = spawned_at + request.timeout;
  auto last_progress = Clock::time_point{};
  std::string last_shown;  // what the last progress call showed
  int ready_answers = 0;
  while (true) {
    const auto iteration = Clock::now();
    const auto elapsed = std::chrono::duration_cast<milliseconds>(iteration - spawned_at);
    if (interrupted.load()) {
      return fail(StartFailure::interrupted, fmt::format("interrupted after {}", seconds(elapsed)));
    }
    if (log.update()) {
      deadline = iteration + request.timeout;  // progress: the timeout starts again
    }
    if (const auto exit = child.poll()) {
      return exited_error(paths, *exit, log.text(), elapsed);
    }
    if (progress) {
      std::string shown = log.progress().describe();
      if (shown != last_shown || iteration - last_progress >= milliseconds(1000)) {
        last_shown = std::move(shown);
        last_progress = iteration;
        progress(StartProgress{log.progress(), elapsed,
                               std::chrono::duration_cast<milliseconds>(request.timeout)});
      }
    }

    if (request.ready_check) {
      if (request.ready_check() && !child.poll()) {
        return std::chrono::duration_cast<milliseconds>(Clock::now() - spawned_at);
      }
      if (Clock::now() >= deadline) {
        return fail(
            StartFailure::timed_out,
            fmt::format("no answer on {} and no new log output for {}, {} after the start",
                        request.url.to_string(), seconds(request.timeout), seconds(elapsed)));
      }
      std::this_thread::sleep_until(iteration + kPollInterval);
      continue;
    }
    const auto health =
        http::http_get(request.url, "/health", kHealthTimeout, http::kSmallAnswerBytes);
    if (health && http::classify_health(*health) == http::HealthState::ready) {
      // Ours only if our child still runs; the log's "model loaded" (printed as /health turns
      // 200) or a few answers in a row rule out another server that took the port.
      log.update();
      if (!child.poll() && (log.loaded() || ++ready_answers >= 3)) {
        return std::chrono::duration_cast<milliseconds>(Clock::now() - spawned_at);
      }
      std::this_thread::sleep_for(kPollIntervalLoaded);
      continue;
    }
    ready_answers = 0;

    if (Clock::now() >= deadline) {
      return fail(StartFailure::timed_out,
                  fmt::format("no /health 200 and no new log output for {}, {} after the start",
                              seconds(request.timeout), seconds(elapsed)));
    }
    std::this_thread::sleep_until(iteration + (log.loaded() ? kPollIntervalLoaded : kPollInterval));
  }
}

}  // namespace

Expected<StartResult> start_server(const StartRequest& request, const ProgressFn& progress,
                                   const std::atomic<bool>& interrupted) {
  const StatePaths& paths = request.paths;
  auto checked = detail::checked_start(request);
  if (!checked) {
    return checked.error();
  }
  const std::vector<std::string>& argv = *checked;

  auto log_fd = platform::open_log_for_append(paths.log);
  if (!log_fd) {
    return Error{log_fd.error().message, ExitCode::server_failed};
  }
  const std::string header = detail::start_header(request.argv);
  const std::uintmax_t region = platform::append_text(*log_fd, header) + header.size();

  // The executable as the kernel resolves it (symlinks followed), taken before the spawn: what
  // stop compares /proc/<pid>/exe with later, even if a symlink in argv[0] is re-pointed
  // meanwhile. Not read back from /proc/<pid>/exe after the spawn: posix_spawn may return
  // before the child's exec (POSIX allows it, qemu-user does it), when that link still names
  // this program.
  std::error_code resolve_error;
  const fs::path resolved_executable = fs::canonical(argv.front(), resolve_error);
  const std::string executable = resolve_error ? std::string() : resolved_executable.string();
  auto spawned = platform::Child::spawn(argv, request.env.to_strings(), log_fd->get());
  log_fd->close();
  if (!spawned) {
    platform::append_line(paths.log,
                          fmt::format("==== {} launch: {}", kToolName, spawned.error().message));
    return failure_error(StartFailure::spawn_failed, spawned.error().message, "", "", paths.log);
  }
  platform::Child child = std::move(spawned).value();
  const auto spawned_at = Clock::now();

  StartResult result;
  result.pid = child.pid();
  LaunchRecord record = request.record;
  if (record.log_path.empty()) {
    record.log_path = paths.log.string();
  }
  Status saved = detail::save_started(request, result.pid, executable, record);
  result.start_time_ticks = record.start_time_ticks;
  if (!saved) {
    const platform::ChildExit stopped = child.terminate(kStopGrace);
    clear_launch_state(paths);
    return Error{fmt::format("{}; {}", saved.error().message, stop_words(stopped, result.pid)),
                 ExitCode::server_failed};
  }

  LogWatcher log(paths.log, region);
  auto to_ready = wait_until_ready(request, child, log, spawned_at, progress, interrupted);
  if (!to_ready) {
    return to_ready.error();
  }
  result.to_ready = *to_ready;
  return result;
}

}  // namespace gb10tune::launch
