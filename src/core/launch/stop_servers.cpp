#include "gb10tune/launch/stop_servers.hpp"

#include <fmt/format.h>

#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/sys/process_owner.hpp"

namespace gb10tune::launch {

namespace {

void record_stop(StopEntry& entry, const Expected<StopResult>& result) {
  if (result) {
    entry.stopped = true;
    entry.killed = result->killed;
    entry.took = result->took;
  } else {
    entry.message = result.error().message;
  }
}

// The RPC workers' endpoints in the plan of a launch record.
std::vector<std::string> recorded_rpc_workers(const LaunchRecord& record) {
  std::vector<std::string> workers;
  if (record.planned.rpc) {
    for (const RecordedWorker& worker : record.planned.rpc->workers) {
      if (!worker.endpoint.empty()) {
        workers.push_back(worker.endpoint);
      }
    }
  }
  return workers;
}

}  // namespace

bool StopOutcome::failed() const {
  for (const StopEntry& entry : entries) {
    if (!entry.stopped) {
      return true;
    }
  }
  return false;
}

std::string_view pid_file_state_name(PidFileState state) {
  switch (state) {
    case PidFileState::none:
      return "none";
    case PidFileState::running:
      return "running";
    case PidFileState::stale:
      return "stale";
  }
  return "none";
}

StopOutcome find_servers_to_stop(const platform::Sysroot& root, const StatePaths& paths,
                                 const StopRequest& request) {
  StopOutcome outcome;
  outcome.all = request.all;
  outcome.pid_file_path = paths.pid_file.string();
  outcome.pid_file = check_pid_file(root, paths);
  if (outcome.pid_file.server) {
    outcome.rpc_workers = recorded_rpc_workers(outcome.pid_file.server->record);
  }
  if (!request.all) {
    return outcome;
  }
  for (const sys::ServerCandidate& candidate : sys::find_running_servers(root)) {
    const auto owner = sys::read_process_uid(root, candidate.stat.pid);
    if (!owner || *owner != request.uid) {
      ++outcome.skipped_other_users;
      continue;
    }
    StopEntry entry;
    entry.pid = candidate.stat.pid;
    entry.exe = candidate.exe ? candidate.exe->path : candidate.stat.comm;
    entry.launched = outcome.pid_file.server && outcome.pid_file.server->pid == entry.pid;
    outcome.listed.push_back(entry);
  }
  return outcome;
}

StopOutcome stop_found(const platform::Sysroot& root, const StatePaths& paths, StopOutcome found,
                       std::chrono::milliseconds grace) {
  StopOutcome outcome = std::move(found);
  if (outcome.pid_file.state == PidFileState::stale) {
    // Its pid is not (or no longer provably) ours: never signalled, the file goes.
    clear_launch_state(paths);
    outcome.stale_removed = true;
  }
  if (outcome.pid_file.server) {
    StopEntry entry;
    entry.pid = outcome.pid_file.server->pid;
    entry.exe = outcome.pid_file.server->record.server_path;
    entry.launched = true;
    record_stop(entry, stop_server(root, paths, grace));
    outcome.entries.push_back(std::move(entry));
  }
  for (StopEntry entry : outcome.listed) {
    if (entry.launched) {
      continue;  // stopped above, through the pid file
    }
    const auto stat = sys::read_process_stat(root, entry.pid);
    if (!stat) {
      entry.message = fmt::format("process {} exited before it was stopped", entry.pid);
      entry.stopped = true;
    } else {
      record_stop(entry, stop_process(root, entry.pid, stat->start_time_ticks, grace));
    }
    outcome.entries.push_back(std::move(entry));
  }
  return outcome;
}

}  // namespace gb10tune::launch
