#include "gb10tune/rpc/worker_start.hpp"

#include <fmt/format.h>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/host_port.hpp"

namespace gb10tune::rpc {

namespace {

using std::chrono::milliseconds;

// The wait for a started worker's devices.
constexpr milliseconds kDevicesTimeout{2000};

// The state files of the worker on `port` in the private state directory of `env`.
Expected<launch::StatePaths> worker_paths(const platform::Environment& env, int port) {
  const auto dir = trust::private_state_dir(env);
  if (!dir) {
    return dir.error();
  }
  return worker_state_paths(*dir, port);
}

}  // namespace

Endpoint query_endpoint(const Endpoint& bind) {
  return {reachable_host(bind.host), bind.port};
}

Expected<StartedWorker> start_worker(const WorkerStartRequest& request,
                                     const platform::Environment& env,
                                     const platform::Sysroot& root,
                                     const std::function<void(const std::string&)>& note,
                                     const std::atomic<bool>& interrupted) {
  WorkerOptions worker = request.worker;
  const Endpoint& bind = worker.bind;
  if (auto argv = worker_argv(worker); !argv) {
    return argv.error();
  }
  if (worker.binary.empty()) {
    auto binary = find_worker_binary(request.server_bin, env);
    if (!binary) {
      return binary.error();
    }
    worker.binary = *binary;
  }
  auto argv = worker_argv(worker);
  if (!argv) {
    return argv.error();
  }
  auto paths = worker_paths(env, bind.port);
  if (!paths) {
    return paths.error();
  }
  auto lock = launch::LaunchLock::acquire(*paths);
  if (!lock) {
    return lock.error();
  }
  const auto status = launch::check_pid_file(root, *paths);
  if (status.state == launch::PidFileState::running) {
    return Error{fmt::format("an RPC worker started by gb10tune already runs on port {} (pid {}); "
                             "stop it first with `gb10tune rpc stop --port {}`",
                             bind.port, status.server->pid, bind.port),
                 ExitCode::failed};
  }
  if (status.state == launch::PidFileState::stale) {
    note("removing a stale pid file: " + status.why);
    launch::clear_launch_state(*paths);
  }

  launch::StartRequest start;
  start.argv = *argv;
  start.env = worker_environment(env, start.record.env_removed);
  for (const auto& name : start.record.env_removed) {
    note(
        fmt::format("removed {} from the worker's environment: llama.cpp tests only whether it "
                    "exists, and a CUDA worker would allocate managed memory (K2)",
                    name));
  }
  start.paths = *paths;
  const Endpoint ask = query_endpoint(bind);
  start.url = http::Url{"http", ask.host, ask.port, ""};
  start.timeout = request.timeout;
  start.record.url = "rpc://" + bind.to_string();
  start.ready_check = [ask] { return hello_worker(ask, milliseconds(500)).has_value(); };
  const auto started = launch::start_server(start, nullptr, interrupted);
  if (!started) {
    return started.error();
  }
  auto info = query_worker(ask, kDevicesTimeout);
  if (!info) {
    // A worker the head could not use is no use running: stop it and say why.
    const auto stopped = launch::stop_server(root, *paths, milliseconds(5000), "rpc start");
    return Error{fmt::format("{}; {}", info.error().message,
                             stopped ? "the worker was stopped"
                                     : "stopping it failed: " + stopped.error().message),
                 ExitCode::server_failed};
  }
  return StartedWorker{started->pid,      *argv,           start.record.env_removed, paths->log,
                       started->to_ready, std::move(*info)};
}

}  // namespace gb10tune::rpc
