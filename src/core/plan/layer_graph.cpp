#include "gb10tune/plan/layer_graph.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "gb10tune/plan/graph_allocator.hpp"
#include "gb10tune/plan/split_copies.hpp"

namespace gb10tune::plan {

namespace {

constexpr std::uint64_t kValueBytes = 4;  // activations are f32

// The architectures replayed, with the llama.cpp file whose graph the sequence follows.
constexpr std::array<std::string_view, 6> kReplayed{"llama", "mistral3", "qwen2",
                                                    "qwen3", "qwen3moe", "glm4moe"};

// Which Hadamard rotations a quantized cache turns on (llama_kv_cache's constructor: attn_rot_k
// when K is quantized and the K head size is a multiple of 64, attn_rot_v the same for V;
// LLAMA_ATTN_ROT_DISABLE, which launch never sets, turns both off).
struct Rotation {
  bool k = false;
  bool v = false;
};

Rotation rotation_of(const model::LayerFacts& layer, const GraphShape& shape) {
  const std::uint64_t head_k = layer.head_count_kv > 0 ? layer.k_width / layer.head_count_kv : 0;
  const std::uint64_t head_v = layer.head_count_kv > 0 ? layer.v_width / layer.head_count_kv : 0;
  return {gguf::ggml_type_info(shape.cache_k).quantized && head_k > 0 && head_k % 64 == 0,
          gguf::ggml_type_info(shape.cache_v).quantized && head_v > 0 && head_v % 64 == 0};
}

// The flash-attention output as the buffer type sizes it. On CUDA the tensor carries f16
// copies of a quantized K and V view (ggml_cuda_flash_attn_ext_get_alloc_size: the MMA and tile
// kernels that a micro-batch gets need f16 K/V; each copy 128-byte aligned after the output),
// so a quantized cache makes the reserve larger, not smaller.
std::uint64_t flash_attention_bytes(const model::LayerFacts& layer, const GraphShape& shape,
                                    PlanBackend backend, std::uint64_t out) {
  if (backend != PlanBackend::cuda) {
    return out;
  }
  const auto pad = [](std::uint64_t n) { return (n + 127) / 128 * 128; };
  const std::uint64_t cells =
      (layer.sliding_window ? shape.swa_cells : shape.full_cells) * std::max(1u, shape.streams);
  std::uint64_t bytes = out;
  if (gguf::ggml_type_info(shape.cache_k).quantized) {
    bytes = pad(bytes) + std::uint64_t{layer.k_width} * cells * 2;
  }
  if (gguf::ggml_type_info(shape.cache_v).quantized) {
    bytes = pad(bytes) + std::uint64_t{layer.v_width} * cells * 2;
  }
  return bytes;
}

// `name` := a new tensor of `bytes` computed from it (a rotation: mul_mat by the Hadamard
// matrix into a tensor of its own), the old one freed.
void rotate(GraphAllocator& a, std::string_view name, std::uint64_t bytes) {
  a.place("rotated", bytes);
  a.free(name);
  a.rename(name, "rotated");
}

// One block as the replay walks it: where its weights are (split_copies.hpp) and its sizes.
struct Block {
  const model::LayerFacts& layer;
  SplitCopies& copies;
  std::uint64_t embd = 0;
  std::uint64_t tokens = 0;
  std::uint64_t outputs = 0;
  bool last = false;
};

// An op that reads the block's weight `role`, output `name` of `bytes` over `rows` rows: on a
// CPU block whose op runs on the GPU the weight's copy comes first, then the other inputs its
// split is the first to read (`point`), and the copy is freed after the op.
void weighted(GraphAllocator& a, const Block& b, std::string_view role, std::string_view name,
              std::uint64_t bytes, std::uint64_t rows,
              std::optional<SplitPoint> point = std::nullopt) {
  b.copies.before(a, b.layer.index, role, rows);
  if (point) {
    b.copies.inputs_at(a, *point, b.layer.index);
  }
  a.place(name, bytes);
  b.copies.after(a, b.layer.index, rows);
}

// A norm (a new tensor) scaled by the block's weight `role` in place.
void normed(GraphAllocator& a, const Block& b, std::string_view role, std::string_view name,
            std::uint64_t bytes, std::uint64_t rows) {
  a.place(name, bytes);
  b.copies.before(a, b.layer.index, role, rows);
  b.copies.after(a, b.layer.index, rows);
}

// build_norm, build_qkv + RoPE (or Q/K norms) into new tensors, the rotations of a quantized
// cache (Q and K by attn_rot_k, V by attn_rot_v, build_attn); K and V end in the cache (on a CPU
// block the CPU writes them from copies in host memory).
void projections(GraphAllocator& a, const Block& b, const GraphShape& shape) {
  const model::LayerFacts& layer = b.layer;
  const std::uint64_t row = b.embd * b.tokens * kValueBytes;
  const std::uint64_t head_k = layer.head_count_kv > 0 ? layer.k_width / layer.head_count_kv : 0;
  const std::uint64_t q = std::uint64_t{layer.head_count} * head_k * b.tokens * kValueBytes;
  const std::uint64_t k = std::uint64_t{layer.k_width} * b.tokens * kValueBytes;
  const std::uint64_t v = std::uint64_t{layer.v_width} * b.tokens * kValueBytes;
  const Rotation rot = rotation_of(layer, shape);
  // With Q/K norms (qwen3) the RoPE follows the norm's weight, in that weight's split.
  const bool qk_norm = b.copies.has(layer.index, "attn_q_norm");
  normed(a, b, "attn_norm", "attn_norm", row, b.tokens);
  weighted(a, b, "attn_q", "Q", q, b.tokens,
           qk_norm ? std::nullopt : std::optional(SplitPoint::first_query));
  a.place("Qcur", q);  // RoPE (or the Q norm) of a view: a new tensor
  a.free("Q");
  if (qk_norm) {
    b.copies.before(a, layer.index, "attn_q_norm", b.tokens);
    b.copies.inputs_at(a, SplitPoint::first_query, layer.index);
    b.copies.after(a, layer.index, b.tokens);
  }
  if (rot.k) {
    rotate(a, "Qcur", q);
  }
  weighted(a, b, "attn_v", "Vcur", v, b.tokens);
  if (rot.v) {
    rotate(a, "Vcur", v);
  }
  weighted(a, b, "attn_k", "K", k, b.tokens);
  a.free("attn_norm");
  a.place("Kcur", k);
  a.free("K");
  b.copies.before(a, layer.index, "attn_k_norm", b.tokens);
  b.copies.after(a, layer.index, b.tokens);
  if (rot.k) {
    rotate(a, "Kcur", k);
  }
  a.free("Kcur");  // written into the cache
  a.free("Vcur");
}

// build_attn_mha over the cache: flash attention or KQ/softmax/KQV/contiguous copy. A CPU
// block's attention reads copies of its layer's whole K and V cache.
void attention_core(GraphAllocator& a, const Block& b, const GraphShape& shape,
                    PlanBackend backend) {
  const model::LayerFacts& layer = b.layer;
  const std::uint64_t head_v = layer.head_count_kv > 0 ? layer.v_width / layer.head_count_kv : 0;
  const std::uint64_t out = std::uint64_t{layer.head_count} * head_v * b.tokens * kValueBytes;
  const bool host = b.copies.copies(layer.index, b.tokens);
  const auto cache_copy = [&](bool v) {
    if (host) {
      a.place(v ? "v_cache_copy" : "k_cache_copy", b.copies.cache_copy_bytes(layer, v));
    }
  };
  const auto cache_free = [&](bool v) {
    if (host) {
      a.free(v ? "v_cache_copy" : "k_cache_copy");
    }
  };
  if (shape.flash_attention) {
    cache_copy(false);  // the split's inputs in the op's order: K, V, the mask
    cache_copy(true);
    b.copies.inputs_at(a, SplitPoint::first_attention, layer.index);
    a.place("kqv_out", flash_attention_bytes(layer, shape, backend, out));
    a.free("Qcur");
    cache_free(false);
    cache_free(true);
    return;
  }
  const std::uint64_t cells = layer.sliding_window ? shape.swa_cells : shape.full_cells;
  cache_copy(false);  // KQ reads K, the softmax the mask, KQV V
  b.copies.inputs_at(a, SplitPoint::first_attention, layer.index);
  cache_copy(true);
  a.place("kq", cells * b.tokens * layer.head_count * kValueBytes);  // the softmax runs in place
  cache_free(false);
  a.free("Qcur");
  a.place("kqv", out);
  cache_free(true);
  a.free("kq");
  a.place("kqv_out", out);  // the permuted heads made contiguous
  a.free("kqv");
}

// One block's attention: the projections, the attention, the V rotation of its output, the
// output projection; ends with `ffn_inp` (the residual added in place of the projection) and
// the block's input freed. In the last block only the output rows go on (get_rows of the
// projection and of the input).
void attention(GraphAllocator& a, const Block& b, const GraphShape& shape, PlanBackend backend) {
  const model::LayerFacts& layer = b.layer;
  const std::uint64_t head_v = layer.head_count_kv > 0 ? layer.v_width / layer.head_count_kv : 0;
  const std::uint64_t out = std::uint64_t{layer.head_count} * head_v * b.tokens * kValueBytes;
  projections(a, b, shape);
  attention_core(a, b, shape, backend);
  if (rotation_of(layer, shape).v) {
    rotate(a, "kqv_out", out);
  }
  weighted(a, b, "attn_output", "attn_out", b.embd * b.tokens * kValueBytes, b.tokens,
           SplitPoint::last_output_proj);
  a.free("kqv_out");
  if (b.last) {
    const std::uint64_t rows = b.embd * b.outputs * kValueBytes;
    a.place("attn_rows", rows);
    a.free("attn_out");
    a.place("inp_rows", rows);
    a.free("inp");
    a.rename("ffn_inp", "attn_rows");
    a.free("inp_rows");
    return;
  }
  a.rename("ffn_inp", "attn_out");
  a.free("inp");
}

// The tensors of one gated feed-forward: the weights' roles and the outputs' names.
struct GatedFfn {
  std::string_view gate_weight, up_weight, down_weight;
  std::string_view gate, up, glu, down;
};

// Gate and up from the normed input (freed after them when `free_norm`), the GLU, then down
// (the split `point` of the down weight's copy) and the GLU freed; `down` stays.
void gated(GraphAllocator& a, const Block& b, const GatedFfn& f, std::uint64_t ff,
           std::uint64_t down, std::uint64_t t, bool free_norm, std::optional<SplitPoint> point) {
  weighted(a, b, f.gate_weight, f.gate, ff, t);
  weighted(a, b, f.up_weight, f.up, ff, t);
  if (free_norm) {
    a.free("ffn_norm");
  }
  a.place(f.glu, ff);
  a.free(f.gate);
  a.free(f.up);
  weighted(a, b, f.down_weight, f.down, down, t, point);
  a.free(f.glu);
}

// build_ffn with a gate (LLM_FFN_PAR, SiLU/GELU): gate, up, the GLU, down; ends with `l_out`.
void dense_ffn(GraphAllocator& a, const Block& b, std::uint64_t t) {
  const std::uint64_t row = b.embd * t * kValueBytes;
  normed(a, b, "ffn_norm", "ffn_norm", row, t);
  gated(a, b, {"ffn_gate", "ffn_up", "ffn_down", "ffn_gate", "ffn_up", "ffn_glu", "ffn_out"},
        b.layer.ffn_width * t * kValueBytes, row, t, true, SplitPoint::last_host_down);
  a.rename("l_out", "ffn_out");
  a.free("ffn_inp");
}

// The shared expert after the routed ones (glm4moe): it keeps the normed input alive through
// the routed part; its output is added into moe_out in place.
void shared_expert(GraphAllocator& a, const Block& b, const model::ModelFacts& model,
                   std::uint64_t t) {
  gated(a, b,
        {"ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp", "shexp_gate", "shexp_up", "shexp_glu",
         "shexp_out"},
        model.shared_ffn_width * t * kValueBytes, b.embd * t * kValueBytes, t, true,
        SplitPoint::last_host_down);
  a.free("shexp_out");
}

// build_moe_ffn: router logits and probabilities (in place), the selection (plus the bias when
// the model has one), top-k, the weights (normalised when asked), gate/up/GLU and down for the
// used experts, the weighting in place, the sum of the experts (one new row, then in place);
// then the shared expert.
void moe_ffn(GraphAllocator& a, const Block& b, const model::ModelFacts& model, std::uint64_t t) {
  const std::uint64_t row = b.embd * t * kValueBytes;
  const std::uint64_t experts = std::uint64_t{model.expert_count} * t * kValueBytes;
  const std::uint64_t used = std::max(1u, model.expert_used_count);
  const std::uint64_t weights = used * t * kValueBytes;
  const std::uint64_t ff = model.expert_ffn_width * used * t * kValueBytes;
  const bool shared = model.shared_ffn_width > 0;
  normed(a, b, "ffn_norm", "ffn_norm", row, t);
  weighted(a, b, "ffn_gate_inp", "moe_probs", experts, t);
  if (model.expert_selection_bias) {
    a.place("moe_biased", experts);
    a.place("moe_topk", experts);
    a.free("moe_biased");
  } else {
    a.place("moe_topk", experts);
  }
  a.place("moe_weights", weights);
  a.free("moe_probs");
  if (model.expert_weights_norm) {
    a.place("moe_weights_sum", t * kValueBytes);
    a.place("moe_weights_norm", weights);
    a.free("moe_weights");
    a.free("moe_weights_sum");
    a.rename("moe_weights", "moe_weights_norm");
  }
  gated(a, b,
        {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps", "moe_gate", "moe_up", "moe_glu",
         "moe_down"},
        ff, b.embd * used * t * kValueBytes, t, !shared,
        shared ? std::nullopt : std::optional(SplitPoint::last_host_down));
  a.free("moe_topk");
  a.free("moe_weights");  // the weighting ran in place of moe_down
  a.place("moe_out", row);
  a.free("moe_down");
  if (shared) {
    shared_expert(a, b, model, t);
  }
  a.rename("l_out", "moe_out");
  a.free("ffn_inp");
}

// The part of the graph a tensor of the replay belongs to, in the plan's words.
std::string phase_of(std::string_view tensor) {
  constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kPhases{{
      {"weight_copy", "a CPU layer's weight copied to the GPU"},
      {"k_cache_copy", "a CPU layer's KV cache copied to the GPU"},
      {"v_cache_copy", "a CPU layer's KV cache copied to the GPU"},
      {"kq", "attention scores (KQ)"},
      {"kqv", "attention scores (KQ)"},
      {"kqv_out", "attention"},
      {"result_output", "output head"},
      {"result_norm", "output head"},
      {"moe_", "mixture of experts"},
      {"shexp_", "shared expert"},
      {"ffn_", "feed-forward"},
  }};
  for (const auto& [prefix, phase] : kPhases) {
    if (tensor == prefix || (prefix.back() == '_' && tensor.substr(0, prefix.size()) == prefix)) {
      return std::string(phase);
    }
  }
  return "attention";
}

}  // namespace

bool replays_main_graph(const model::ModelFacts& model) {
  if (model.mla || model.per_layer_input_width > 0 || model.is_hybrid()) {
    return false;
  }
  for (const std::string_view arch : kReplayed) {
    if (model.architecture == arch) {
      return true;
    }
  }
  return false;
}

namespace {

// The last block's feed-forward when it stays on the CPU (a CPU block whose output rows are
// fewer than op offload needs): only the norm runs on the GPU before the rows go to the CPU.
void ffn_on_the_cpu(GraphAllocator& a, std::uint64_t rows) {
  a.place("ffn_norm", rows);
  a.free("ffn_norm");
  a.free("ffn_inp");
}

// The head: the output norm, then the logits (a graph output, never freed). With the output
// layer in host memory and too few rows for op offload it runs on the CPU: nothing here. When
// the last block ended on the CPU, the GPU gets a copy of its output rows first.
void head(GraphAllocator& a, const model::ModelFacts& model, SplitCopies& copies,
          std::uint64_t outputs, bool tail_on_cpu) {
  const std::uint64_t rows = std::uint64_t{model.embedding_length} * outputs * kValueBytes;
  if (copies.in_host(kOutputBlock) && outputs < kOpOffloadMinRows) {
    return;
  }
  if (tail_on_cpu) {
    a.place("inp", rows);
  }
  a.place("result_norm", rows);
  a.free("inp");
  copies.before(a, kOutputBlock, "output", outputs);
  a.place("result_output", model.vocab_size * outputs * kValueBytes);
  copies.after(a, kOutputBlock, outputs);
}

}  // namespace

std::optional<ReplayedGraph> replay_main_graph(const model::ModelFacts& model,
                                               const GraphShape& shape, PlanBackend backend,
                                               std::uint64_t tokens, std::uint64_t outputs,
                                               const GraphInputs& inputs) {
  if (!replays_main_graph(model)) {
    return std::nullopt;
  }
  const std::uint64_t embd = model.embedding_length;
  const std::uint64_t row = embd * tokens * kValueBytes;
  const bool cuda = backend == PlanBackend::cuda;
  SplitCopies copies(model, cuda ? shape : GraphShape{}, tokens, inputs.copies);
  // ggml-backend buffer alignments: CUDA 128 bytes, the CPU's TENSOR_ALIGNMENT 32.
  GraphAllocator a(cuda ? 128 : 32);
  if (cuda) {
    a.place("inp", row);  // the copy of the token lookup, the first block's input
    if (!copies.any()) {
      a.place("inputs", inputs.copies.total());  // one split: every input copied at its start
    }
  } else {
    a.place("inp_tokens", inputs.tokens);
    a.place("inp_embd", inputs.embd);
    a.place("inputs", inputs.copies.total());
    a.place("inp", row);  // the token lookup
    a.free("inp_tokens");
  }
  std::uint32_t last = 0;
  for (const model::LayerFacts& layer : model.layers) {
    if (!layer.mtp) {
      last = layer.index;
    }
  }
  bool tail_on_cpu = false;
  for (const model::LayerFacts& layer : model.layers) {
    // A micro-batch below op offload's rows leaves the CPU blocks to the CPU altogether.
    if (layer.mtp || (copies.in_host(layer.index) && !copies.any())) {
      continue;
    }
    const Block b{layer, copies, embd, tokens, outputs, layer.index == last};
    const std::uint64_t t = b.last ? outputs : tokens;
    attention(a, b, shape, backend);
    if (b.last && copies.in_host(layer.index) && !copies.copies(layer.index, t)) {
      ffn_on_the_cpu(a, embd * t * kValueBytes);
      tail_on_cpu = true;
      continue;
    }
    if (layer.experts) {
      moe_ffn(a, b, model, t);
    } else {
      dense_ffn(a, b, t);
    }
    a.rename("inp", "l_out");
  }
  head(a, model, copies, outputs, tail_on_cpu);
  return ReplayedGraph{a.high_water(), phase_of(a.high_water_tensor())};
}

}  // namespace gb10tune::plan
