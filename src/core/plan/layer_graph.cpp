#include "gb10tune/plan/layer_graph.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "gb10tune/plan/graph_allocator.hpp"

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

// One block's attention: build_norm, build_qkv + RoPE (or Q/K norms) into new tensors, the
// rotations of a quantized cache (Q and K by attn_rot_k, V and the attention output by
// attn_rot_v, build_attn), the cache writes, build_attn_mha, the output projection; ends with
// `ffn_inp` (the residual added in place of the projection) and the block's input freed. In the
// last block only the output rows go on (get_rows of the projection and of the input).
void attention(GraphAllocator& a, const model::LayerFacts& layer, const GraphShape& shape,
               PlanBackend backend, std::uint64_t embd, std::uint64_t tokens, std::uint64_t outputs,
               bool last) {
  const std::uint64_t row = embd * tokens * kValueBytes;
  const std::uint64_t head_k = layer.head_count_kv > 0 ? layer.k_width / layer.head_count_kv : 0;
  const std::uint64_t head_v = layer.head_count_kv > 0 ? layer.v_width / layer.head_count_kv : 0;
  const std::uint64_t q = std::uint64_t{layer.head_count} * head_k * tokens * kValueBytes;
  const std::uint64_t k = std::uint64_t{layer.k_width} * tokens * kValueBytes;
  const std::uint64_t v = std::uint64_t{layer.v_width} * tokens * kValueBytes;
  const std::uint64_t out = std::uint64_t{layer.head_count} * head_v * tokens * kValueBytes;
  const Rotation rot = rotation_of(layer, shape);
  a.place("attn_norm", row);
  a.place("Q", q);
  a.place("Qcur", q);  // RoPE (or the Q norm) of a view: a new tensor
  a.free("Q");
  if (rot.k) {
    rotate(a, "Qcur", q);
  }
  a.place("Vcur", v);
  if (rot.v) {
    rotate(a, "Vcur", v);
  }
  a.place("K", k);
  a.free("attn_norm");
  a.place("Kcur", k);
  a.free("K");
  if (rot.k) {
    rotate(a, "Kcur", k);
  }
  a.free("Kcur");  // written into the cache
  a.free("Vcur");
  if (shape.flash_attention) {
    a.place("kqv_out", flash_attention_bytes(layer, shape, backend, out));
    a.free("Qcur");
  } else {
    const std::uint64_t cells = layer.sliding_window ? shape.swa_cells : shape.full_cells;
    a.place("kq", cells * tokens * layer.head_count * kValueBytes);  // the softmax runs in place
    a.free("Qcur");
    a.place("kqv", out);
    a.free("kq");
    a.place("kqv_out", out);  // the permuted heads made contiguous
    a.free("kqv");
  }
  if (rot.v) {
    rotate(a, "kqv_out", out);
  }
  a.place("attn_out", row);
  a.free("kqv_out");
  if (last) {
    const std::uint64_t rows = embd * outputs * kValueBytes;
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

// build_ffn with a gate (LLM_FFN_PAR, SiLU/GELU): gate, up, the GLU, down; ends with `l_out`.
void dense_ffn(GraphAllocator& a, std::uint64_t ff, std::uint64_t row, std::uint64_t tokens) {
  a.place("ffn_norm", row);
  a.place("ffn_gate", ff * tokens * kValueBytes);
  a.place("ffn_up", ff * tokens * kValueBytes);
  a.free("ffn_norm");
  a.place("ffn_glu", ff * tokens * kValueBytes);
  a.free("ffn_gate");
  a.free("ffn_up");
  a.place("ffn_out", row);
  a.free("ffn_glu");
  a.rename("l_out", "ffn_out");
  a.free("ffn_inp");
}

// build_moe_ffn: router logits and probabilities (in place), the selection (plus the bias when
// the model has one), top-k, the weights (normalised when asked), gate/up/GLU and down for the
// used experts, the weighting in place, the sum of the experts (one new row, then in place);
// then the shared expert, which keeps the normed input alive through the routed part.
void moe_ffn(GraphAllocator& a, const model::ModelFacts& model, std::uint64_t row,
             std::uint64_t tokens) {
  const std::uint64_t experts = std::uint64_t{model.expert_count} * tokens * kValueBytes;
  const std::uint64_t used = std::max(1u, model.expert_used_count);
  const std::uint64_t weights = used * tokens * kValueBytes;
  const std::uint64_t ff = model.expert_ffn_width * used * tokens * kValueBytes;
  const bool shared = model.shared_ffn_width > 0;
  a.place("ffn_norm", row);
  a.place("moe_probs", experts);
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
    a.place("moe_weights_sum", tokens * kValueBytes);
    a.place("moe_weights_norm", weights);
    a.free("moe_weights");
    a.free("moe_weights_sum");
    a.rename("moe_weights", "moe_weights_norm");
  }
  a.place("moe_gate", ff);
  a.place("moe_up", ff);
  if (!shared) {
    a.free("ffn_norm");
  }
  a.place("moe_glu", ff);
  a.free("moe_gate");
  a.free("moe_up");
  a.place("moe_down", std::uint64_t{model.embedding_length} * used * tokens * kValueBytes);
  a.free("moe_glu");
  a.free("moe_topk");
  a.free("moe_weights");  // the weighting ran in place of moe_down
  a.place("moe_out", row);
  a.free("moe_down");
  if (shared) {
    const std::uint64_t sh = model.shared_ffn_width * tokens * kValueBytes;
    a.place("shexp_gate", sh);
    a.place("shexp_up", sh);
    a.free("ffn_norm");
    a.place("shexp_glu", sh);
    a.free("shexp_gate");
    a.free("shexp_up");
    a.place("shexp_out", row);
    a.free("shexp_glu");
    a.free("shexp_out");  // added into moe_out in place
  }
  a.rename("l_out", "moe_out");
  a.free("ffn_inp");
}

// The part of the graph a tensor of the replay belongs to, in the plan's words.
std::string phase_of(std::string_view tensor) {
  constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kPhases{{
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

std::optional<ReplayedGraph> replay_main_graph(const model::ModelFacts& model,
                                               const GraphShape& shape, PlanBackend backend,
                                               std::uint64_t tokens, std::uint64_t outputs,
                                               const GraphInputs& inputs) {
  if (!replays_main_graph(model)) {
    return std::nullopt;
  }
  const std::uint64_t embd = model.embedding_length;
  const std::uint64_t row = embd * tokens * kValueBytes;
  // ggml-backend buffer alignments: CUDA 128 bytes, the CPU's TENSOR_ALIGNMENT 32.
  GraphAllocator a(backend == PlanBackend::cuda ? 128 : 32);
  if (backend == PlanBackend::cuda) {
    a.place("inp", row);  // the copy of the token lookup, the first block's input
    a.place("inputs", inputs.rest);
  } else {
    a.place("inp_tokens", inputs.tokens);
    a.place("inp_embd", inputs.embd);
    a.place("inputs", inputs.rest);
    a.place("inp", row);  // the token lookup
    a.free("inp_tokens");
  }
  std::uint32_t last = 0;
  for (const model::LayerFacts& layer : model.layers) {
    if (!layer.mtp) {
      last = layer.index;
    }
  }
  for (const model::LayerFacts& layer : model.layers) {
    if (layer.mtp) {
      continue;
    }
    const bool is_last = layer.index == last;
    const std::uint64_t t = is_last ? outputs : tokens;
    attention(a, layer, shape, backend, embd, tokens, outputs, is_last);
    if (layer.experts) {
      moe_ffn(a, model, embd * t * kValueBytes, t);
    } else {
      dense_ffn(a, layer.ffn_width, embd * t * kValueBytes, t);
    }
    a.rename("inp", "l_out");
  }
  // The head: the output norm, then the logits (a graph output, never freed).
  a.place("result_norm", embd * outputs * kValueBytes);
  a.free("inp");
  a.place("result_output", model.vocab_size * outputs * kValueBytes);
  return ReplayedGraph{a.high_water(), phase_of(a.high_water_tensor())};
}

}  // namespace gb10tune::plan
