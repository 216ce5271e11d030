#include "gb10tune/launch/launch_rpc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/rpc/rpc_worker.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/host_port.hpp"

namespace gb10tune::launch {

std::optional<rpc::WorkerInfo> recorded_worker_info(const RecordedWorker& worker) {
  auto endpoint = rpc::parse_endpoint(worker.endpoint);
  if (!endpoint) {
    return std::nullopt;
  }
  rpc::WorkerInfo info;
  info.endpoint = *endpoint;
  unsigned major = 0, minor = 0, patch = 0;
  if (std::sscanf(worker.protocol_version.c_str(), "%u.%u.%u", &major, &minor, &patch) == 3) {
    info.version = {static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(minor),
                    static_cast<std::uint8_t>(patch)};
  }
  info.devices = worker.devices;
  return info;
}

std::vector<rpc::WorkerInfo> workers_in_use(const platform::Environment& env,
                                            const platform::Sysroot& root) {
  std::vector<rpc::WorkerInfo> out;
  const auto dir = trust::private_state_dir(env);
  if (!dir) {
    return out;
  }
  const auto status = check_pid_file(root, StatePaths::under(*dir));
  if (status.state != PidFileState::running || !status.server->record.planned.rpc) {
    return out;
  }
  for (const RecordedWorker& worker : status.server->record.planned.rpc->workers) {
    if (auto info = recorded_worker_info(worker)) {
      out.push_back(std::move(*info));
    }
  }
  return out;
}

Expected<std::vector<rpc::WorkerInfo>> contact_workers(const std::vector<rpc::Endpoint>& endpoints,
                                                       const rpc::ProtocolVersion& head,
                                                       const std::vector<rpc::WorkerInfo>& in_use,
                                                       const NoteSink& note) {
  std::vector<rpc::WorkerInfo> workers;
  for (const rpc::Endpoint& endpoint : endpoints) {
    const auto busy = std::find_if(in_use.begin(), in_use.end(), [&](const rpc::WorkerInfo& w) {
      return w.endpoint == endpoint;
    });
    if (busy != in_use.end()) {
      note(NoteKind::info,
           fmt::format("RPC worker {} serves the llama-server launched from here: not contacted "
                       "(it serves one client at a time); planned with what it reported at that "
                       "launch",
                       endpoint.to_string()));
      workers.push_back(*busy);
      continue;
    }
    auto version = rpc::hello_worker(endpoint, kWorkerTimeout);
    if (!version) {
      return Error{fmt::format("{}; nothing was started (llama-server cannot load without every "
                               "worker; start it there with `gb10tune rpc start --host {} --port "
                               "{}`, or leave it out of --rpc)",
                               version.error().message, endpoint.host, endpoint.port),
                   ExitCode::server_failed};
    }
    if (!rpc::compatible(*version, head)) {
      return Error{fmt::format("RPC worker {} speaks RPC protocol {}, the head's llama-server "
                               "speaks {}: llama.cpp refuses a worker of another major version "
                               "or a newer minor version. Build rpc-server and llama-server from "
                               "the same llama.cpp commit on both machines; nothing was started",
                               endpoint.to_string(), version->to_string(), head.to_string()),
                   ExitCode::usage};
    }
    auto info = rpc::query_worker(endpoint, kWorkerTimeout, head);
    if (!info) {
      return Error{info.error().message + "; nothing was started", ExitCode::server_failed};
    }
    workers.push_back(std::move(*info));
  }
  return workers;
}

Expected<std::vector<std::string>> worker_command(const rpc::Endpoint& endpoint) {
  rpc::WorkerOptions worker;
  worker.binary = rpc::kWorkerNames[0];
  worker.bind = endpoint;
  worker.cache = true;
  return rpc::worker_argv(worker);
}

render::RpcPreview plan_rpc_launch(const model::ModelFacts& model, const plan::PlanConfig& config,
                                   plan::MemoryPlan& plan, std::vector<rpc::WorkerInfo> workers,
                                   const HeadBudget& head, const LaunchSizes& sizes,
                                   const std::vector<rpc::Endpoint>& endpoints) {
  render::RpcPreview preview;
  preview.head_version = rpc::kKnownVersion;
  preview.workers = workers;
  rpc::NodeBudgets nodes;
  nodes.workers = std::move(workers);
  nodes.worker_reserve_bytes = sizes.rpc_reserve;
  nodes.head_mem_available = head.mem_available;
  nodes.head_reserve_bytes = sizes.reserve;
  nodes.head_devices = head.devices;
  nodes.head_gpus_discrete = head.discrete;
  plan.per_node = true;
  preview.nodes = rpc::plan_nodes(model, config, plan, nodes);
  for (const rpc::Endpoint& endpoint : endpoints) {
    auto argv = worker_command(endpoint);
    preview.worker_argv.push_back(argv ? *argv : std::vector<std::string>{});
    preview.worker_start.push_back(
        fmt::format("gb10tune rpc start --host {} --port {} --cache{}", endpoint.host,
                    endpoint.port, binds_every_interface(endpoint.host) ? " --expose" : ""));
  }
  return preview;
}

}  // namespace gb10tune::launch
