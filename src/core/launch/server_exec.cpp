#include "gb10tune/launch/server_exec.hpp"

#include <fmt/format.h>

#include <optional>

#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/platform/log_file.hpp"
#include "gb10tune/platform/process_exec.hpp"
#include "gb10tune/version.hpp"
#include "start_checks.hpp"

namespace gb10tune::launch {

Error exec_server(const StartRequest& request, const std::filesystem::path& log) {
  auto argv = detail::checked_start(request);
  if (!argv) {
    return argv.error();
  }
  std::optional<platform::Fd> log_fd;
  if (!log.empty()) {
    auto opened = platform::open_log_for_append(log);
    if (!opened) {
      return Error{opened.error().message, ExitCode::server_failed};
    }
    platform::append_text(*opened, detail::start_header(request.argv));
    log_fd.emplace(std::move(*opened));
  }
  LaunchRecord record = request.record;
  record.log_path = log.string();  // "" = the supervisor's (the journal)
  record.foreground = true;
  const int pid = platform::current_pid();
  // After the exec /proc/<pid>/exe is the binary itself: its real path, as checked.
  if (Status saved = detail::save_started(request, pid, argv->front(), record); !saved) {
    clear_launch_state(request.paths);
    return Error{saved.error().message, ExitCode::server_failed};
  }
  const Error failed =
      platform::exec_replace(*argv, request.env.to_strings(), log_fd ? log_fd->get() : -1);
  clear_launch_state(request.paths);
  if (!log.empty()) {
    platform::append_line(log, fmt::format("==== {} launch: {}", kToolName, failed.message));
  }
  return Error{fmt::format("llama-server could not be run in the foreground: {}.\n{}",
                           failed.message, failure_advice(StartFailure::spawn_failed)),
               ExitCode::server_failed};
}

}  // namespace gb10tune::launch
