// A launch across llama.cpp RPC workers (K21): each worker asked for its protocol and memory
// (except one the running head already uses), the command each runs on its machine, and the
// plan per node against each machine's own memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/launch/launch_budget.hpp"
#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/launch/launch_request.hpp"
#include "gb10tune/render/node_plan_render.hpp"
#include "gb10tune/rpc/rpc_client.hpp"

namespace gb10tune::launch {

// How long one worker may take to answer the hello and its memory.
inline constexpr std::chrono::milliseconds kWorkerTimeout{5000};

// The worker as `record` saw it at its launch; nullopt when its endpoint does not parse. A
// version that does not read as major.minor.patch is 0.0.0.
std::optional<rpc::WorkerInfo> recorded_worker_info(const RecordedWorker& worker);

// The workers a llama-server launched from here (its record in the state directory of `env`,
// its pid file checked under `root`) still uses, as its record saw them at its launch:
// rpc-server serves one client at a time, and a hello queued behind a running head's session is
// read when the head leaves, when rpc-server answers a closed socket and dies of SIGPIPE. Such
// a worker is never contacted. Empty when no such server runs.
std::vector<rpc::WorkerInfo> workers_in_use(const platform::Environment& env,
                                            const platform::Sysroot& root);

// Asks every worker for its protocol version and memory (but not one in `in_use`: a note says
// so, and it is planned with what it reported then). A worker that does not answer is an Error
// (exit 5: the server cannot start without it) naming it; one of a protocol the head cannot use
// an Error (exit 2) naming it and both versions.
Expected<std::vector<rpc::WorkerInfo>> contact_workers(const std::vector<rpc::Endpoint>& endpoints,
                                                       const rpc::ProtocolVersion& head,
                                                       const std::vector<rpc::WorkerInfo>& in_use,
                                                       const NoteSink& note);

// The command a worker runs on its machine (gb10tune rpc start's: the binary by its name, the
// endpoint's address, the tensor cache on); the Errors of rpc::worker_argv.
Expected<std::vector<std::string>> worker_command(const rpc::Endpoint& endpoint);

// The plan per node: `plan` (made for `config` without the head's budgets) split over
// `workers` and the head (`head`, its reserve `head_reserve`), each worker keeping
// `worker_reserve` free, with each worker's commands. Marks `plan` as planned per node.
render::RpcPreview plan_rpc_launch(const model::ModelFacts& model, const plan::PlanConfig& config,
                                   plan::MemoryPlan& plan, std::vector<rpc::WorkerInfo> workers,
                                   const HeadBudget& head, const LaunchSizes& sizes,
                                   const std::vector<rpc::Endpoint>& endpoints);

}  // namespace gb10tune::launch
