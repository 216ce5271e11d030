// The main graph's compute buffer replayed op by op for the architectures whose blocks
// llama.cpp builds the plain way (src/models/llama.cpp, qwen3moe.cpp, glm4-moe.cpp at 3f545be):
// norm, Q/K/V projections (each RoPE'd or normed into a new tensor: the allocator cannot run
// those in place on a view), attention with or without flash attention, the output projection,
// the residual, norm, then a dense gated feed-forward or a mixture of experts (router, top-k,
// gate/up/GLU per used expert, down, the weighted sum; glm4moe's shared expert after it). Every
// tensor is placed and freed as ggml's allocator does (graph_allocator.hpp), so the buffer's
// fragmentation is in the figure: a MoE block whose down projection (n_embd × n_used × tokens)
// does not fit the hole its gate and up leave lands above its GLU. Checked against the buffers
// of real llama-server builds, CPU and CUDA (tests/unit/heldout_cuda_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/compute_buffers.hpp"
#include "gb10tune/plan/split_copies.hpp"

namespace gb10tune::plan {

// The graph inputs as the allocator meets them, in bytes.
struct GraphInputs {
  std::uint64_t tokens = 0;  // inp_tokens (i32 per token): CPU buffer only, freed after lookup
  std::uint64_t embd = 0;    // inp_embd ([n_embd, n_tokens] f32): the CPU's, never used
  // positions, masks, K/V row indices, output ids: alive to the end; on CUDA copied to the GPU,
  // all at once with every block offloaded, each where a split first reads it otherwise
  InputCopies copies;
};

// True for the architectures whose main graph is replayed (the plain blocks above).
bool replays_main_graph(const model::ModelFacts& model);

// A replayed graph's buffer and the part of the graph whose tensor set its size.
struct ReplayedGraph {
  std::uint64_t bytes = 0;
  std::string peak_phase;  // "attention scores (KQ)", "feed-forward", "mixture of experts", …
};

// The compute buffer of the main graph: the CPU buffer on the CPU backend, the CUDA0 buffer on
// CUDA; with shape.host_blocks the CPU blocks' ops that run on the GPU and the scheduler's
// copies of their weights, KV caches and the inputs (split_copies.hpp). `tokens` is the reserve's
// n_tokens, `outputs` its n_outputs. nullopt when the model is not one replays_main_graph accepts.
std::optional<ReplayedGraph> replay_main_graph(const model::ModelFacts& model,
                                               const GraphShape& shape, PlanBackend backend,
                                               std::uint64_t tokens, std::uint64_t outputs,
                                               const GraphInputs& inputs);

}  // namespace gb10tune::plan
