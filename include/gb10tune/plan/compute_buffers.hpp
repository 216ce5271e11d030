// The buffers a llama_context allocates besides its weights and caches, sized the way llama.cpp
// (2026-08, commit 3f545be) sizes them:
//  - the output buffer (llama_context::output_reserve): n_vocab logits per output row, f32, in
//    host memory; n_seq_max rows at start, growing to n_outputs_max (the server sets it to
//    slots × (1 + draft tokens)) at the first decode that needs them; with draft-mtp the target
//    context also keeps n_embd × n_batch pre-norm hidden values (embeddings_nextn, unmasked) and
//    the draft context n_embd × n_outputs_max (masked);
//  - the compute buffer(s) that ggml's graph allocator reserves for the worst-case graph
//    (llama_context::sched_reserve: n_tokens = min(n_ctx, n_ubatch) rounded up to a multiple of
//    n_seq_max, n_outputs = min(n_tokens, n_outputs_max), the KV cache at its full size).
// The compute buffer is modelled as the graph inputs (live from the start: ggml-alloc allocates
// them first) plus the largest set of tensors alive at one time in one phase of a layer
// (attention, FFN/MoE, gated delta net, output head). Which phases an architecture has is data
// (`graph_rules`), each citing the model file of llama.cpp it follows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/model/model_facts.hpp"

namespace gb10tune::plan {

// The backend that holds llama.cpp's buffers: decides which compute buffers the server
// allocates and what the backend's runtime itself takes.
enum class PlanBackend { cpu, cuda };

// The graph a context reserves, as far as its size is concerned.
struct GraphShape {
  std::uint32_t slots = 1;       // n_seq_max
  std::uint32_t ubatch = 512;    // -ub
  std::uint32_t batch = 2048;    // -b
  std::uint64_t n_ctx = 0;       // the context's cells (after padding)
  std::uint64_t full_cells = 0;  // n_kv of the full-attention layers (cells per stream)
  std::uint64_t swa_cells = 0;   // n_kv of the sliding-window layers
  std::uint32_t streams = 1;     // KV streams (1 with -kvu, else n_seq_max)
  gguf::GgmlType cache_k = gguf::GgmlType::f16;  // -ctk: MLA's V is a view of the K cache
  gguf::GgmlType cache_v = gguf::GgmlType::f16;  // -ctv
  bool flash_attention = true;                   // -fa on
  std::uint32_t outputs_max = 1;                 // n_outputs_max of the context
  std::uint32_t state_snapshots = 1;  // 1 + n_rs_seq: recurrent states the delta-net op writes
  // Partial offload on CUDA (-ngl below the layer count, split_copies.hpp): the first
  // `host_blocks` blocks keep their weights and KV cache in host memory; `host_output`: the
  // output layer too (-ngl 0).
  std::uint32_t host_blocks = 0;
  bool host_output = false;
};

// One context's buffers in bytes. On the CPU backend everything is host memory and
// `compute_device` is 0; on CUDA the device buffer holds the graph and the host buffer
// (CUDA_Host, pinned) the inputs and the token-embedding lookup.
struct ContextBuffers {
  std::uint64_t compute_host = 0;     // "CPU compute buffer" / "CUDA_Host compute buffer"
  std::uint64_t compute_device = 0;   // "CUDA0 compute buffer"
  std::uint64_t output = 0;           // "output buffer" at its largest, host memory
  std::uint64_t output_at_start = 0;  // the same at load: n_seq_max logit rows (what -lv 4 logs)
  std::string peak_phase;             // which part of the graph sets the compute size
  std::uint64_t compute() const { return compute_host + compute_device; }
};

// The main context's buffers and, with draft-mtp, the MTP draft context's.
struct BufferPlan {
  ContextBuffers main;
  ContextBuffers mtp;  // all 0 without draft-mtp
  std::uint64_t compute() const { return main.compute() + mtp.compute(); }
  std::uint64_t output() const { return main.output + mtp.output; }
  std::uint64_t output_at_start() const { return main.output_at_start + mtp.output_at_start; }
};

// The sizes of one context's graph for `model` (the main stack, or the MTP block when `mtp`).
// The model must be supported (describe_model said so).
ContextBuffers context_buffers(const model::ModelFacts& model, const GraphShape& shape,
                               PlanBackend backend, bool mtp_graph);

// n_outputs_max as llama-server sets it (server_output_limits): min(n_batch, slots × (1 +
// draft tokens)), draft tokens 0 without speculative decoding.
std::uint32_t server_outputs_max(std::uint32_t batch, std::uint32_t slots,
                                 std::uint32_t draft_tokens);

}  // namespace gb10tune::plan
