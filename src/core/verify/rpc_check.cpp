#include "gb10tune/verify/rpc_check.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "gb10tune/plan/calibration.hpp"
#include "gb10tune/plan/expected_memory.hpp"
#include "gb10tune/rpc/node_log.hpp"
#include "gb10tune/rpc/rpc_worker.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::verify {

namespace {

using server::Finding;
using server::Severity;

// A node's figure against its plan: launch's and verify's one tolerance.
constexpr double kNodeTolerancePercent = plan::kPlanTolerancePercent;

// The node plan as recorded (names, devices, load figures): enough to read the log per node.
rpc::NodePlan rpc_recorded_nodes(const launch::RecordedRpc& rpc) {
  rpc::NodePlan plan;
  for (const launch::RecordedNode& n : rpc.nodes) {
    rpc::NodePart part;
    part.node = n.node;
    part.devices = n.devices;
    part.load_bytes = n.load_bytes;
    part.buffer_bytes = n.buffer_bytes;
    plan.nodes.push_back(std::move(part));
  }
  return plan;
}

// A recorded version, or "?" when the record has none.
std::string version_or_unknown(const std::string& version) {
  return version.empty() ? "?" : version;
}

Finding rpc_reachable(const rpc::Endpoint& endpoint, const RpcWorkerAccess& access) {
  Finding f;
  f.id = "rpc-worker-reachable";
  f.fact = "K21";
  f.summary = fmt::format("RPC worker {} reachable", endpoint.to_string());
  if (!access.connect) {
    f.severity = Severity::warn;
    f.evidence = "unknown: not checked";
    return f;
  }
  if (auto ok = access.connect(endpoint); !ok) {
    f.severity = Severity::fail;
    f.evidence = ok.error().message;
    f.fix = fmt::format(
        "the head cannot compute without it: check the worker there (`gb10tune rpc status "
        "--port {}`), the link, and restart the head (`gb10tune stop`, then launch)",
        endpoint.port);
    return f;
  }
  f.evidence =
      "accepts TCP connections (connect only: the head holds the worker's one RPC session, so "
      "no RPC message is sent)";
  return f;
}

Finding rpc_same_build(const rpc::Endpoint& endpoint, const launch::RecordedWorker& worker,
                       const std::string& head_version, const std::string& head_binary,
                       const std::optional<LocalWorker>& local) {
  Finding f;
  f.id = "rpc-worker-build";
  f.fact = "K21";
  f.summary = fmt::format("RPC worker {} runs the head's build", endpoint.to_string());
  const std::string version = version_or_unknown(worker.protocol_version);
  const std::string protocol = fmt::format(
      "at launch it spoke RPC protocol {}, the head {} (llama.cpp checks this when the head "
      "connects)",
      version, head_version);
  if (local && !local->binary.empty() && !head_binary.empty()) {
    const auto worker_dir = std::filesystem::path(local->binary).parent_path();
    const auto head_dir = std::filesystem::path(head_binary).parent_path();
    if (worker_dir == head_dir) {
      f.evidence = fmt::format("{} and {} come from one build directory; {}", local->binary,
                               head_binary, protocol);
      return f;
    }
    f.severity = Severity::warn;
    f.evidence = fmt::format("unknown: the worker runs {}, the head {} (other directories); {}",
                             local->binary, head_binary, protocol);
    f.fix = "build ggml-rpc-server and llama-server from one llama.cpp commit";
    return f;
  }
  f.severity = Severity::warn;
  f.evidence = fmt::format(
      "unknown: the RPC protocol carries its version only, not the llama.cpp commit; {}", protocol);
  f.fix =
      "on the worker, compare its ggml-rpc-server with the head's build (same llama.cpp "
      "commit and options)";
  return f;
}

Finding rpc_memory(const rpc::Endpoint& endpoint, std::size_t index, const rpc::NodePlan& nodes,
                   const std::optional<std::vector<rpc::NodeLogBuffers>>& logged,
                   const std::optional<LocalWorker>& local) {
  Finding f;
  f.id = "rpc-worker-memory";
  f.fact = "K13";
  f.summary = fmt::format("RPC worker {} holds what the plan says", endpoint.to_string());
  const std::uint64_t planned = index < nodes.nodes.size() ? nodes.nodes[index].load_bytes : 0;
  const std::uint64_t buffers = index < nodes.nodes.size() ? nodes.nodes[index].buffer_bytes : 0;
  std::vector<std::string> evidence;
  bool over = false;
  bool measured = false;
  if (logged && index < logged->size()) {
    const std::uint64_t bytes = (*logged)[index].total();
    const double error = plan::error_percent(buffers, bytes);
    evidence.push_back(fmt::format("planned buffers {}, the head's log puts {} there ({:+.1f}%)",
                                   format_bytes(buffers), format_bytes(bytes), error));
    over = over || error < -kNodeTolerancePercent || error > kNodeTolerancePercent;
    measured = true;
  }
  if (local && local->rss) {
    const double error = plan::error_percent(planned, *local->rss);
    evidence.push_back(
        fmt::format("its process (pid {}) holds {} RSS now ({:+.1f}% against the "
                    "plan {})",
                    local->pid, format_bytes(*local->rss), error, format_bytes(planned)));
    over = over || error > kNodeTolerancePercent;
    measured = true;
  }
  if (!measured) {
    f.severity = Severity::warn;
    f.evidence = fmt::format(
        "unknown: plan {}; the head's log has no buffer lines (-lv 4 prints them) and the worker "
        "runs on another machine; its free memory now cannot be asked while the head holds its "
        "session",
        format_bytes(planned));
    f.fix = fmt::format(
        "add -- -lv 4 to the launch, or run `gb10tune rpc status --port {}` on "
        "the worker after stopping the head",
        endpoint.port);
    return f;
  }
  f.evidence = fmt::format("{}", fmt::join(evidence, "; "));
  if (over) {
    f.severity = Severity::warn;
    f.fix = "the plan per node is off by more than 5%: report it with the head's log";
  }
  return f;
}

}  // namespace

std::vector<Finding> check_rpc_workers(const launch::RecordedRpc& rpc, std::string_view head_log,
                                       const std::string& head_binary,
                                       const RpcWorkerAccess& access) {
  std::vector<Finding> out;
  const rpc::NodePlan nodes = rpc_recorded_nodes(rpc);
  const auto logged = head_log.empty() ? std::nullopt : rpc::node_buffers_from_log(head_log, nodes);
  const std::string head_version = version_or_unknown(rpc.head_protocol_version);
  for (std::size_t i = 0; i < rpc.workers.size(); ++i) {
    const launch::RecordedWorker& worker = rpc.workers[i];
    const auto endpoint = rpc::parse_endpoint(worker.endpoint);
    if (!endpoint) {
      Finding bad;
      bad.id = "rpc-worker-reachable";
      bad.severity = Severity::warn;
      bad.summary = "RPC worker named by the launch record";
      bad.evidence = "unknown: " + endpoint.error().message;
      out.push_back(std::move(bad));
      continue;
    }
    const std::optional<LocalWorker> local = access.local ? access.local(*endpoint) : std::nullopt;
    out.push_back(rpc_reachable(*endpoint, access));
    out.push_back(rpc_same_build(*endpoint, worker, head_version, head_binary, local));
    out.push_back(rpc_memory(*endpoint, i, nodes, logged, local));
  }
  return out;
}

}  // namespace gb10tune::verify
