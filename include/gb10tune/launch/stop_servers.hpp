// `gb10tune stop`'s decisions: which processes it stops (the pid file's server and, with --all,
// every running llama-server of the caller found in /proc) and how each stop went, computed
// before anything is printed.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::launch {

// One process stop tried (or refused).
struct StopEntry {
  int pid = 0;
  std::string exe;        // the executable's path (the kernel's name when unreadable)
  bool launched = false;  // the server of the pid file
  bool stopped = false;
  bool killed = false;  // SIGKILL was needed
  std::chrono::milliseconds took{0};
  std::string message;  // why it was not stopped, or what happened instead
};

// Everything `stop` found and did.
struct StopOutcome {
  PidFileStatus pid_file;
  std::string pid_file_path;
  bool stale_removed = false;  // a stale pid file and record were removed, nothing signalled
  bool all = false;
  std::vector<StopEntry> listed;   // --all: the processes found, in pid order
  std::vector<StopEntry> entries;  // the stops tried, the pid file's server first
  std::size_t skipped_other_users = 0;
  // The RPC workers the pid file's server used (from its launch record): they keep running,
  // each stopped on its own machine with `gb10tune rpc stop`.
  std::vector<std::string> rpc_workers;

  // True when a stop tried did not stop its process.
  bool failed() const;
};

// "none", "running" or "stale" (stable ids for --json).
std::string_view pid_file_state_name(PidFileState state);

// What to stop.
struct StopRequest {
  bool all = false;  // every running llama-server of `uid`, not only the pid file's
  unsigned uid = 0;  // the caller (platform::current_uid())
};

// What stop would do, with nothing signalled or removed: the pid file's state under `paths`
// (check_pid_file) and the RPC workers of its server's launch record; with request.all the
// running llama-servers under `root` (sys::find_running_servers) owned by request.uid, listed
// in pid order (those of other users only counted). Never fails.
StopOutcome find_servers_to_stop(const platform::Sysroot& root, const StatePaths& paths,
                                 const StopRequest& request);

// Carries out `found` (find_servers_to_stop's answer): removes a stale pid file and record
// (never signalling their pid), stops the pid file's server (stop_server) and, when found.all,
// every other process listed (stop_process, against the start time its /proc/<pid>/stat shows
// then), waiting `grace` from SIGTERM to SIGKILL. Never fails: each entry says how its stop went
// (a listed process that exited meanwhile counts as stopped).
StopOutcome stop_found(const platform::Sysroot& root, const StatePaths& paths, StopOutcome found,
                       std::chrono::milliseconds grace);

}  // namespace gb10tune::launch
