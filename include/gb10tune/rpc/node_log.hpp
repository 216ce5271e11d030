// What a head's llama-server log says each node holds: its buffer lines (printed at -lv 4:
// "load_tensors: RPC0[10.0.0.2:50052] model buffer size = 200.00 MiB", "llama_kv_cache: …
// KV buffer size", "sched_reserve: … compute buffer size", "… output buffer size") summed per
// node of a NodePlan. An RPC buffer belongs to the worker its name's endpoint names (the index
// counts that worker's devices: every worker's first device is "RPC0[…]"); every other buffer
// (CPU, CPU_Mapped, CUDA0, CUDA_Host) to the head.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "gb10tune/rpc/node_plan.hpp"

namespace gb10tune::rpc {

// One node's buffers as the log printed them, in bytes (MiB rounded to the byte).
struct NodeLogBuffers {
  std::uint64_t model_bytes = 0;
  std::uint64_t kv_bytes = 0;  // KV and recurrent state (RS)
  std::uint64_t compute_bytes = 0;
  std::uint64_t output_bytes = 0;
  int lines = 0;
  std::uint64_t total() const { return model_bytes + kv_bytes + compute_bytes + output_bytes; }
};

// The buffers per node of `nodes` (same order) from one start's log text; nullopt when the
// log has no buffer line (default verbosity) or names a worker the plan does not have.
std::optional<std::vector<NodeLogBuffers>> node_buffers_from_log(std::string_view log_text,
                                                                 const NodePlan& nodes);

}  // namespace gb10tune::rpc
