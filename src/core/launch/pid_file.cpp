// The pid file, the launch lock, and the identity check shared by check_pid_file and stop.
#include <fmt/format.h>

#include <filesystem>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/strings.hpp"
#include "server_identity.hpp"

namespace gb10tune::launch {

namespace fs = std::filesystem;

namespace detail {

Identity check_identity(const platform::Sysroot& root, int pid, std::uint64_t start_time_ticks,
                        const std::string& server_path) {
  Identity identity;
  const auto stat = sys::read_process_stat(root, pid);
  if (!stat || stat->exited()) {
    identity.gone = true;
    identity.why = fmt::format("process {} has exited", pid);
    return identity;
  }
  const auto exe = sys::read_process_exe(root, pid);
  const std::string owner = exe ? exe->path
                                : (exe.error().failure == sys::ProcFailure::permission_denied
                                       ? std::string("another user's process")
                                       : fmt::format("a process named '{}'", stat->comm));
  if (start_time_ticks == 0 || stat->start_time_ticks != start_time_ticks) {
    identity.why = fmt::format("pid {} now belongs to {} (started at tick {}, not {})", pid, owner,
                               stat->start_time_ticks, start_time_ticks);
    return identity;
  }
  if (!server_path.empty()) {
    if (!exe) {
      identity.why = fmt::format("pid {} cannot be checked: {}", pid, exe.error().message);
      return identity;
    }
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(server_path, ec);
    if (exe->path != server_path && (ec || exe->path != resolved.string())) {
      identity.why = fmt::format("pid {} now belongs to {}, not {}", pid, exe->path, server_path);
      return identity;
    }
  }
  identity.same = true;
  return identity;
}

}  // namespace detail

Expected<LaunchLock> LaunchLock::acquire(const StatePaths& paths) {
  if (const Status dir = trust::ensure_private_dir(paths.lock.parent_path()); !dir) {
    return dir.error();
  }
  auto taken = platform::FileLock::try_acquire(paths.lock);
  if (!taken) {
    return taken.error();
  }
  if (auto* busy = std::get_if<platform::FileLock::Busy>(&*taken)) {
    const std::string holder =
        busy->holder ? fmt::format("pid {}", *busy->holder) : std::string("another process");
    return Error{fmt::format("another gb10tune launch ({}) is starting a server from this state "
                             "directory (it holds {}); wait for it to finish, or stop it first",
                             holder, paths.lock.string()),
                 ExitCode::failed};
  }
  return LaunchLock(std::get<platform::FileLock>(std::move(*taken)));
}

PidFileStatus check_pid_file(const platform::Sysroot& root, const StatePaths& paths) {
  PidFileStatus status;
  const auto text = trust::read_private_file(paths.pid_file);
  if (text && !*text) {
    return status;  // none
  }
  status.state = PidFileState::stale;
  if (!text) {
    status.why = text.error().message;
    return status;
  }
  const auto parsed = parse_u64(trim(**text));
  if (!parsed || *parsed == 0 || *parsed > 0x7fffffff) {
    status.why = fmt::format("the pid file {} holds no process id", paths.pid_file.string());
    return status;
  }
  status.pid = static_cast<int>(*parsed);
  auto record = read_launch_record(paths.record);
  if (!record) {
    status.why = fmt::format(
        "there is no readable launch record to confirm that pid {} is the server gb10tune "
        "started ({}); `gb10tune stop --all` stops every llama-server of yours",
        status.pid, record.error().message);
    return status;
  }
  if (record->pid != status.pid) {
    status.why = fmt::format("the pid file names pid {} but the launch record {} names pid {}",
                             status.pid, paths.record.string(), record->pid);
    return status;
  }
  const detail::Identity identity =
      detail::check_identity(root, status.pid, record->start_time_ticks, record->server_path);
  if (!identity.same) {
    status.why = identity.why;
    return status;
  }
  status.state = PidFileState::running;
  status.server = RunningServer{status.pid, std::move(record).value()};
  return status;
}

void clear_launch_state(const StatePaths& paths) {
  std::error_code ec;
  fs::remove(paths.pid_file, ec);
  fs::remove(paths.record, ec);
}

}  // namespace gb10tune::launch
