// stop_server and stop_process: signal a server only after proving it is the recorded one.
#include <fmt/format.h>

#include <csignal>
#include <filesystem>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/platform/log_file.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/version.hpp"
#include "server_identity.hpp"

namespace gb10tune::launch {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kKillWait{10000};  // after SIGKILL, the kernel needs only moments

// Opens `pid`, then checks it (so that the checked process is the one the handle refers to),
// then SIGTERM, `grace`, SIGKILL.
Expected<StopResult> signal_checked(const platform::Sysroot& root, int pid,
                                    std::uint64_t start_time_ticks, const std::string& server_path,
                                    milliseconds grace) {
  if (!root.is_live()) {
    return Error{fmt::format("process {} of a captured machine (--sysroot {}) cannot be stopped",
                             pid, root.root().string()),
                 ExitCode::usage};
  }
  const auto started = Clock::now();
  auto handle = platform::ProcessHandle::open(pid);
  if (!handle) {
    return Error{fmt::format("{}: nothing was signalled", handle.error().message),
                 ExitCode::failed};
  }
  const detail::Identity identity =
      detail::check_identity(root, pid, start_time_ticks, server_path);
  if (!identity.same) {
    return Error{fmt::format("{}: it was not signalled", identity.why), ExitCode::failed};
  }
  if (const Status sent = handle->signal(SIGTERM); !sent) {
    return Error{sent.error().message, ExitCode::failed};
  }
  StopResult result;
  result.pid = pid;
  if (!handle->wait_exit(grace)) {
    result.killed = true;
    if (const Status sent = handle->signal(SIGKILL); !sent) {
      return Error{sent.error().message, ExitCode::failed};
    }
    if (!handle->wait_exit(kKillWait)) {
      return Error{fmt::format("process {} still runs {} s after SIGKILL (stuck in the kernel, "
                               "state D?); check `ps -o stat -p {}`",
                               pid, kKillWait.count() / 1000, pid),
                   ExitCode::failed};
    }
  }
  result.took = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
  return result;
}

void note_in_log(const std::filesystem::path& log, const StopResult& stopped, std::string_view by) {
  platform::append_line(
      log, fmt::format("==== {} {}: pid {} {} after {:.1f} s", kToolName, by, stopped.pid,
                       stopped.killed ? "killed with SIGKILL" : "ended on SIGTERM",
                       static_cast<double>(stopped.took.count()) / 1000.0));
}

}  // namespace

Expected<StopResult> stop_server(const platform::Sysroot& root, const StatePaths& paths,
                                 milliseconds grace, std::string_view by) {
  const PidFileStatus status = check_pid_file(root, paths);
  if (status.state == PidFileState::none) {
    return Error{"no llama-server started by gb10tune is running", ExitCode::failed};
  }
  if (status.state == PidFileState::stale) {
    return Error{fmt::format("the pid file {} is stale: {}", paths.pid_file.string(), status.why),
                 ExitCode::failed};
  }
  const LaunchRecord& record = status.server->record;
  auto stopped =
      signal_checked(root, status.pid, record.start_time_ticks, record.server_path, grace);
  if (!stopped) {
    return stopped;
  }
  clear_launch_state(paths);
  // The lock goes too, unless a launch holds it right now.
  if (auto lock = platform::FileLock::try_acquire(paths.lock)) {
    if (auto* held = std::get_if<platform::FileLock>(&*lock)) {
      held->remove_and_release();
    }
  }
  std::error_code ec;
  if (std::filesystem::exists(paths.log, ec)) {
    note_in_log(paths.log, *stopped, by);
  }
  return stopped;
}

Expected<StopResult> stop_process(const platform::Sysroot& root, int pid,
                                  std::uint64_t start_time_ticks, milliseconds grace) {
  return signal_checked(root, pid, start_time_ticks, "", grace);
}

}  // namespace gb10tune::launch
