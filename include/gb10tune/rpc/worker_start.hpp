// Starting an RPC worker here (`rpc start`): the lock and pid file of its port, the start with
// a clean environment, the wait for its hello, and its devices asked once it is up. A worker
// the head could not use is stopped again, never left running.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/rpc/rpc_client.hpp"
#include "gb10tune/rpc/rpc_worker.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::rpc {

// What a start is asked.
struct WorkerStartRequest {
  WorkerOptions worker;    // binary "" = find it (find_worker_binary with `server_bin`)
  std::string server_bin;  // --rpc-server PATH; "" = on PATH
  std::chrono::milliseconds timeout{60000};  // the wait for the worker's hello
};

// A worker that answered.
struct StartedWorker {
  int pid = 0;
  std::vector<std::string> argv;
  std::vector<std::string> env_removed;  // variables taken out of its environment (K2)
  std::filesystem::path log;
  std::chrono::milliseconds to_ready{0};
  WorkerInfo info;  // its protocol and devices
};

// Where to ask a worker bound to `bind`: the loopback address for an any-address bind.
Endpoint query_endpoint(const Endpoint& bind);

// Starts the worker of `request` with the state files of its port in the private state
// directory of `env`; `note` hears each step it went past (a stale pid file removed, a variable
// removed from the environment). The Errors, in order: the bind (checked before anything else:
// a refused address needs no binary), the binary, the state directory, the lock, a worker
// gb10tune started that still runs on the port (ExitCode::failed, naming `rpc stop`), the start
// (launch::start_server's), and a worker that does not answer its devices (stopped again;
// ExitCode::server_failed).
Expected<StartedWorker> start_worker(const WorkerStartRequest& request,
                                     const platform::Environment& env,
                                     const platform::Sysroot& root,
                                     const std::function<void(const std::string&)>& note,
                                     const std::atomic<bool>& interrupted);

}  // namespace gb10tune::rpc
