// The memory plan of one llama-server spread over machines with llama.cpp's RPC backend: which
// layers each machine (node) holds and what its buffers take, each node against its own budget.
// The placement is llama.cpp's (2026-08, commit 3f545be):
//  - llama.cpp's device list puts the RPC devices first, in --rpc order and each worker's
//    devices in its own order ("RPC0", "RPC1", … counted over all workers), then the head's
//    discrete GPUs, or its integrated GPU (GB10's CUDA0) when it has no discrete one
//    (llama_model_load_from_file_impl);
//  - the layers are cut over that list by free memory (each RPC device's as the worker reports
//    it; a device reporting 0 free and 0 total counts the head's CPU memory), or by
//    --tensor-split, and -ngl offloads the last N of the n_layer + 1 layers
//    (load_tensors, see plan::assign_layers); the token embedding stays on the head's CPU;
//  - a layer's KV cache and recurrent state sit on its layer's device; every device that holds
//    a layer gets a compute buffer for its part of the graph (ggml_backend_sched), the head
//    keeps the graph inputs, the output (logits) buffers and the prompt cache in host memory.
// A CPU worker reports its whole memory as free (ggml-cpu: "free system memory is ill-defined"),
// so its budget is its total memory; a GPU worker (GB10: MemAvailable) reports what is free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/rpc/rpc_client.hpp"

namespace gb10tune::rpc {

// Kept free on each worker by default: llama.cpp's own fit leaves 1024 MiB per device.
inline constexpr std::uint64_t kDefaultWorkerReserveBytes = 1ull << 30;

// What rpc-server itself holds on a CPU worker besides the buffers it allocates for the head
// (the binary, its heap): 5.1 MiB RSS idle (ggml-rpc-server 3f545be, x86-64, docs/rpc.md).
inline constexpr std::uint64_t kCpuWorkerRuntimeBytes = 5ull << 20;

// What the head's llama-server holds for the RPC client (serialized graphs, socket buffers)
// beyond a one-machine server's runtime: measured 1.6 MiB in the two-worker run (docs/rpc.md).
inline constexpr std::uint64_t kRpcClientBytes = 2ull << 20;

// The machines and their budgets.
struct NodeBudgets {
  std::vector<WorkerInfo> workers;  // in --rpc order, as they answered
  std::uint64_t worker_reserve_bytes = kDefaultWorkerReserveBytes;
  std::optional<std::uint64_t> head_mem_available;  // the head's MemAvailable; nullopt: unknown
  std::uint64_t head_reserve_bytes = plan::kDefaultReserveBytes;
  // The head's own devices, after the RPC ones (GB10: "CUDA0" with MemAvailable as its free
  // memory; a CPU build: none). Their buffers count against the head's budget, unless
  // `head_gpus_discrete`.
  std::vector<plan::GpuBudget> head_devices;
  // The head's devices are discrete GPUs: each one's part (its layers, caches, compute buffer,
  // CUDA context, the projector) is judged against its own free memory less its reserve, and
  // the head's MemAvailable only holds what stays in host memory.
  bool head_gpus_discrete = false;
};

// One machine's part.
struct NodePart {
  std::string node;                   // "head", or the worker's "host:port"
  std::vector<std::string> devices;   // llama.cpp's names: "RPC0", "RPC1"; "CPU", "CUDA0"
  std::vector<std::uint32_t> layers;  // block indices on it (the output layer not included)
  bool output_layer = false;
  bool input_layer = false;         // the token embedding (the head only)
  std::uint64_t weights_bytes = 0;  // its layers' tensors
  std::uint64_t cache_bytes = 0;    // KV, recurrent state, MTP KV of its layers
  std::uint64_t compute_bytes = 0;  // its compute buffer(s)
  std::uint64_t runtime_bytes = 0;  // the process on it (llama-server or rpc-server)
  std::uint64_t host_bytes = 0;     // head only: output buffers, prompt cache, margin, calibration
  std::uint64_t total_bytes = 0;    // all of the above
  std::optional<std::uint64_t> free_bytes;       // reported free (workers) or MemAvailable (head)
  std::uint64_t reserve_bytes = 0;               // kept free on it
  std::optional<std::uint64_t> available_bytes;  // free − reserve
  std::optional<std::int64_t> margin_bytes;      // available − total
  // Its budget holds it (false also when the budget is unknown); on a head with discrete GPUs,
  // its host part and every GPU.
  bool fits = false;
  bool free_is_total = false;  // a CPU worker: it reports its total memory as free
  // llama.cpp's buffers on it (weights, KV/state, compute; the head's output buffers too): the
  // figure its buffer lines (-lv 4) and a worker's own allocations are compared with.
  std::uint64_t buffer_bytes = 0;
  // What it holds once loaded, as modelled (the buffers and the process, no margin, prompt
  // cache or calibration): the figure compared with the process's memory.
  std::uint64_t load_bytes = 0;
  // A head with discrete GPUs: each GPU's part, judged on its own; the fields above are then
  // the head's host memory (its layers those left on the CPU), except buffer_bytes, which
  // counts the GPUs' buffers too, as the head's log lists them. Empty on any other node.
  std::vector<plan::DevicePart> gpus;
};

// The plan over every node.
struct NodePlan {
  std::vector<NodePart> nodes;        // the workers in --rpc order, then the head
  std::uint32_t gpu_layers = 0;       // -ngl as planned
  std::uint32_t layer_count = 0;      // n_layer + 1 (the output layer included)
  bool budgets_known = false;         // every node's budget is known
  bool fits = false;                  // every node fits
  std::uint64_t total_bytes = 0;      // over all nodes
  std::uint64_t available_bytes = 0;  // over all nodes (meaningful when budgets_known)
  // The first node that does not fit ("" when all fit or unknown); a head GPU as "head CUDA0".
  std::string first_short;
  std::string tightest;  // the node (or head GPU) with the least margin
};

// Splits `plan` (made for `config` with the head's backend) over the workers and the head as
// llama-server places its buffers with --rpc, and checks each node against its own budget.
// `config.gpu_layers` and `config.tensor_split` are -ngl and --tensor-split (RPC devices first).
NodePlan plan_nodes(const model::ModelFacts& model, const plan::PlanConfig& config,
                    const plan::MemoryPlan& plan, const NodeBudgets& budgets);

// The worker a head-log buffer name belongs to: llama.cpp names an RPC buffer type
// "RPC<device index on that worker>[<endpoint as given to --rpc>]", so "RPC0[127.0.0.1:50053]"
// → "127.0.0.1:50053" (the second worker's first device). nullopt for any other buffer.
std::optional<std::string> rpc_buffer_endpoint(std::string_view buffer_name);

}  // namespace gb10tune::rpc
