// Rendering a launch across RPC workers: the workers as they answered, the plan per node, the
// refusal naming the node that does not fit, and the command each worker runs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gb10tune/render/document.hpp"
#include "gb10tune/rpc/node_plan.hpp"

namespace gb10tune::render {

// What launch --rpc adds to a launch: the workers, the plan per node and their commands.
struct RpcPreview {
  std::vector<rpc::WorkerInfo> workers;  // in --rpc order
  rpc::ProtocolVersion head_version;     // the protocol the head is checked against
  rpc::NodePlan nodes;
  std::vector<std::vector<std::string>> worker_argv;  // per worker: the rpc-server command
  std::vector<std::string> worker_start;              // per worker: `gb10tune rpc start …`
};

// {"workers": [...], "nodes": {...}}: every figure in bytes, each worker's version, devices
// (free/total at launch) and commands. Also what the launch record keeps for verify.
nlohmann::json rpc_to_json(const RpcPreview& rpc);

// The per-node table: one block per node (devices, layers, weights + KV + compute + process,
// against free − reserve), then the commands of the workers.
std::string render_rpc_text(const RpcPreview& rpc, const TextStyle& style);

// The refusal when a node does not fit: names every such node, what it needs and has, and
// what the nodes have together.
std::string rpc_refusal(const rpc::NodePlan& nodes);

}  // namespace gb10tune::render
