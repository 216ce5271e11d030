#include "gb10tune/plan/compute_buffers.hpp"

#include <algorithm>
#include <array>

#include "gb10tune/plan/layer_graph.hpp"
#include "gb10tune/plan/split_copies.hpp"

namespace gb10tune::plan {

namespace {

constexpr std::uint64_t kF32 = 4;  // activations are f32 (GGML_TYPE_F32)
constexpr std::uint64_t kI32 = 4;
constexpr std::uint64_t kI64 = 8;

// How an architecture's graph differs, as far as the size of its live tensors goes.
struct GraphRule {
  std::string_view arch;
  bool q_gate;        // the Q projection also carries a per-head output gate (2 × n_head × d_k)
  bool gated_ffn;     // FFN is gate + up + GLU (SwiGLU/GeGLU): three n_ff-wide tensors alive
  bool positions_x4;  // multi-section RoPE: 4 positions per token (n_pos_per_embd)
  std::string_view source;  // the llama.cpp file that builds the graph
};

constexpr std::array kRules{
    GraphRule{"llama", false, true, false, "src/models/llama.cpp"},
    GraphRule{"qwen2", false, true, false, "src/models/qwen2.cpp"},
    GraphRule{"qwen3", false, true, false, "src/models/qwen3.cpp"},
    GraphRule{"qwen3moe", false, true, false, "src/models/qwen3moe.cpp"},
    GraphRule{"qwen35", true, true, true, "src/models/qwen35.cpp"},
    GraphRule{"qwen35moe", true, true, true, "src/models/qwen35moe.cpp"},
    GraphRule{"qwen3next", true, true, false, "src/models/qwen3next.cpp"},
    GraphRule{"gemma3", false, true, false, "src/models/gemma3.cpp"},
    GraphRule{"gpt-oss", false, true, false, "src/models/openai-moe.cpp"},
    GraphRule{"glm4moe", false, true, false, "src/models/glm4-moe.cpp"},
    GraphRule{"mistral3", false, true, false, "src/models/mistral3.cpp"},
    GraphRule{"seed_oss", false, true, false, "src/models/seed-oss.cpp"},
    GraphRule{"qwen3vl", false, true, true, "src/models/qwen3vl.cpp"},
    GraphRule{"qwen3vlmoe", false, true, true, "src/models/qwen3vlmoe.cpp"},
    GraphRule{"minimax-m2", false, true, false, "src/models/minimax-m2.cpp"},
    GraphRule{"llama4", false, true, false, "src/models/llama4.cpp"},
    GraphRule{"deepseek2", false, true, false, "src/models/deepseek2.cpp"},
};

const GraphRule& rule_of(std::string_view arch) {
  for (const GraphRule& rule : kRules) {
    if (rule.arch == arch) {
      return rule;
    }
  }
  return kRules.front();  // every supported architecture is listed; llama's rules otherwise
}

// The largest of the phase peaks seen so far, and its name.
struct Peak {
  std::uint64_t bytes = 0;
  std::string_view phase;
  void offer(std::uint64_t candidate, std::string_view name) {
    if (candidate > bytes) {
      bytes = candidate;
      phase = name;
    }
  }
};

// The Hadamard matrices a quantized cache rotates with (llama_kv_cache::build_input_k_rot and
// build_input_v_rot, f32 graph inputs): K's of the largest power of two from 64 up that divides
// the head size, V's always 64 × 64; none for a type that is not quantized or a head size that
// is not a multiple of 64.
std::uint64_t rotation_inputs(const model::ModelFacts& model, const GraphShape& shape,
                              bool mtp_graph) {
  for (const model::LayerFacts& layer : model.layers) {
    if (layer.head_count_kv == 0 || layer.recurrent || layer.mtp != mtp_graph) {
      continue;
    }
    const std::uint64_t head_k = layer.k_width / layer.head_count_kv;
    const std::uint64_t head_v = layer.v_width / layer.head_count_kv;
    std::uint64_t bytes = 0;
    if (gguf::ggml_type_info(shape.cache_k).quantized && head_k % 64 == 0) {
      std::uint64_t n = 64;
      while (head_k % (2 * n) == 0) {
        n *= 2;
      }
      bytes += n * n * kF32;
    }
    if (gguf::ggml_type_info(shape.cache_v).quantized && head_v % 64 == 0) {
      bytes += 64 * 64 * kF32;
    }
    return bytes;
  }
  return 0;
}

// What the CUDA_Host buffer holds above the inputs: the token lookup (n_embd × n_tokens),
// freed once the GPU has its copy; under partial offload the CPU blocks' K and V (f32) that the
// CPU writes into their cache go into that hole, and a last block and head left to the CPU (too
// few output rows for op offload) compute their rows there, the logits last.
std::uint64_t cpu_side_peak(const model::ModelFacts& model, const GraphShape& shape,
                            std::uint64_t tokens, std::uint64_t outputs, bool mtp_graph) {
  const std::uint64_t embd = model.embedding_length;
  std::uint64_t peak = embd * tokens * kF32;
  if (mtp_graph || shape.host_blocks == 0 || tokens < kOpOffloadMinRows) {
    return peak;
  }
  for (const model::LayerFacts& layer : model.layers) {
    if (!layer.mtp && layer.index < shape.host_blocks) {
      peak = std::max<std::uint64_t>(
          peak, (std::uint64_t{layer.k_width} + layer.v_width) * tokens * kF32);
    }
  }
  if (shape.host_blocks >= model.main_layer_count && outputs < kOpOffloadMinRows) {
    const std::uint64_t ff =
        std::max(model.ffn_width, model.expert_ffn_width * std::max(1u, model.expert_used_count));
    const std::uint64_t logits = shape.host_output ? model.vocab_size * outputs * kF32 : 0;
    peak = std::max(peak, (2 * embd + 3 * ff) * outputs * kF32 + logits);
  }
  return peak;
}

// The size of the graph llama.cpp reserves: its tokens, output rows and sequences.
struct GraphSize {
  std::uint64_t slots = 1;    // n_seq_max
  std::uint64_t tokens = 1;   // n_tokens of the reserved ubatch
  std::uint64_t outputs = 1;  // output rows
  std::uint64_t row = 0;      // one [n_embd, n_tokens] f32 activation
};

GraphSize graph_size(const model::ModelFacts& model, const GraphShape& shape) {
  GraphSize size;
  size.slots = std::max<std::uint32_t>(1, shape.slots);
  // llama_context::sched_reserve: n_tokens = min(n_ctx, n_ubatch); graph_reserve rounds it up
  // to a multiple of n_seqs (= n_seq_max).
  const std::uint64_t tokens = std::min<std::uint64_t>(shape.n_ctx, shape.ubatch);
  size.tokens = std::max<std::uint64_t>(1, (tokens + size.slots - 1) / size.slots * size.slots);
  size.outputs = std::min<std::uint64_t>(size.tokens, std::max(1u, shape.outputs_max));
  size.row = model.embedding_length * size.tokens * kF32;
  return size;
}

// The graph's inputs: the copies the device holds, everything the host sets, and the per-layer
// input of the models that have one.
struct GraphInputTotals {
  InputCopies copies;
  std::uint64_t bytes = 0;            // every input, the token ids and `embd` included
  std::uint64_t per_layer_input = 0;  // one [n_embd_per_layer × n_layer, n_tokens] f32 tensor
};

// Graph inputs (ggml-alloc places them first; the masks live until the last attention
// layer): llm_graph_input_embd tokens + embd, positions, output ids, and per KV cache the
// mask (f16 with flash attention, else f32; [n_kv, n_tokens]) and the K/V row indices
// (transposed V without flash attention: one index per value).
// The main graph always holds llm_graph_input_embd's `embd` (build_inp_embd selects between
// it and the token lookup); the MTP graph (qwen35.cpp graph_mtp) leaves that one out of the
// graph and takes the target's hidden state `h` instead: one [n_embd, n_tokens] either way.
GraphInputTotals graph_inputs(const model::ModelFacts& model, const GraphShape& shape,
                              const GraphRule& rule, const GraphSize& size, bool mtp_graph) {
  const std::uint64_t tokens = size.tokens;
  GraphInputTotals inputs;
  InputCopies& copies = inputs.copies;
  copies.positions = tokens * kI32 * (rule.positions_x4 ? 4 : 1);
  copies.output_ids = size.outputs * kI32;
  // Per-layer inputs (gemma3n.cpp / gemma4.cpp build_inp_per_layer and
  // project_per_layer_inputs), [n_embd_per_layer × n_layer, n_tokens] f32 each: two stay alive
  // through the layers (the projected sum and the slice source), two more exist only while
  // they are built before the first layer (the token lookup and the projection). Fitted to a
  // gemma3n of 25 layers, n_embd_per_layer 256, ubatch 512: +49.0 MiB with flash attention,
  // +24.4 MiB without (where the attention scores outgrow the transient pair).
  inputs.per_layer_input = model.per_layer_input_width * tokens * kF32;
  const std::uint64_t mask_elem = shape.flash_attention ? 2 : 4;
  bool any_full = false;
  bool any_swa = false;
  std::uint64_t v_width_max = 0;
  for (const model::LayerFacts& layer : model.layers) {
    const bool in_graph = mtp_graph ? layer.mtp : (!layer.mtp && !layer.recurrent);
    if (!in_graph) {
      continue;
    }
    (layer.sliding_window ? any_swa : any_full) = true;
    v_width_max = std::max<std::uint64_t>(v_width_max, layer.v_width);
  }
  const std::uint64_t v_index = shape.flash_attention ? tokens * kI64 : tokens * v_width_max * kI64;
  if (any_full) {
    copies.masks += shape.full_cells * tokens * mask_elem;
    copies.k_indices += tokens * kI64;
    copies.v_indices += v_index;
  }
  if (any_swa) {
    copies.masks += shape.swa_cells * tokens * mask_elem;
    copies.k_indices += tokens * kI64;
    copies.v_indices += v_index;
  }
  copies.positions += rotation_inputs(model, shape, mtp_graph);
  inputs.bytes = 2 * inputs.per_layer_input + tokens * kI32 + size.row + copies.total();
  return inputs;
}

// Gated delta net (qwen35.cpp build_layer_attn_linear): qkv_mixed and z projections, the
// conv input (conv state + tokens), the conv output, then l2-normed q/k and the fused
// delta-net output that carries the final state of each sequence.
std::uint64_t gated_delta_net_peak(const model::ModelFacts& model, const GraphShape& shape,
                                   const GraphSize& size) {
  const std::uint64_t tokens = size.tokens;
  const std::uint64_t resid = size.row;  // the residual stream (inpSA / ffn_inp)
  const std::uint64_t norm = size.row;   // the normed input of a block
  const std::uint64_t key = std::uint64_t{model.ssm_group_count} * model.ssm_state_size;
  const std::uint64_t conv = model.ssm_inner_size + 2 * key;
  const std::uint64_t qkv = conv * tokens * kF32;
  const std::uint64_t z = std::uint64_t{model.ssm_inner_size} * tokens * kF32;
  const std::uint64_t conv_in =
      conv * (tokens + size.slots * (model.ssm_conv_kernel > 0 ? model.ssm_conv_kernel - 1 : 0)) *
      kF32;
  // delta-net-base.cpp build_recurrent_attn: the fused op's output holds the attention
  // output and 1 + n_rs_seq state snapshots per sequence.
  const std::uint64_t state =
      std::uint64_t{model.ssm_state_size} * model.ssm_inner_size * size.slots * kF32;
  const std::uint64_t delta_out = z + state * std::max(1u, shape.state_snapshots);
  // The conv input stays alive until the conv has run (its last columns are the next
  // conv state); l2-normed q and k then fit into its freed block, the delta-net output
  // does not: conv input + conv output + delta output + the state read is the mark.
  const std::uint64_t live = std::max(norm + qkv + conv_in, conv_in + qkv + delta_out + state);
  return resid + z + live;
}

// deepseek2.cpp with MLA, per head and token: q (key_length_mla wide), its RoPE part
// roped into a tensor of its own, the non-RoPE part absorbed into the latent (kv_lora
// wide), then Qcur = concat(absorbed, roped): latent + RoPE. q is freed before Qcur is
// placed, but its block is too small for Qcur, so it stays a hole under it: all four
// count. Flash attention then writes a latent-wide output per head (after Qcur's
// inputs are freed); without it the scores come on top, and build_attn_mha copies V,
// a view of the K cache, into a contiguous transposed tensor (cells × latent per
// stream, K's type): it lands in the largest block freed by then (Qcur's, or its
// inputs', latent + RoPE wide per head) when it fits, else on top. CPU build 3f545be,
// 4-128 heads of DeepSeek-V3's sizes: 1344 values per head and token, the slope of
// every run; the V copy on top at 4 heads (8 and 16 MiB) and 8 heads (16 MiB), inside
// a hole at 8 heads (8 MiB) and more.
void offer_mla_attention_peak(Peak& peak, const model::ModelFacts& model,
                              const model::LayerFacts& layer, const GraphShape& shape,
                              const GraphSize& size) {
  const std::uint64_t resid = size.row;
  const std::uint64_t norm = size.row;
  const std::uint64_t head_k = layer.k_width / layer.head_count_kv;
  const std::uint64_t rope = head_k - model.mla_latent_width;
  const std::uint64_t heads = std::uint64_t{layer.head_count} * size.tokens * kF32;
  const std::uint64_t q_chain =
      (model.mla_q_width + rope + model.mla_latent_width + head_k) * heads;
  if (shape.flash_attention) {
    peak.offer(resid + norm + q_chain, "MLA attention (flash)");
    return;
  }
  const std::uint64_t cells = layer.sliding_window ? shape.swa_cells : shape.full_cells;
  const std::uint64_t kq = cells * heads;
  const std::uint64_t v_row = gguf::ggml_bytes(shape.cache_k, model.mla_latent_width)
                                  .value_or(std::uint64_t{model.mla_latent_width} * 2);
  const std::uint64_t v_copy = cells * shape.streams * v_row;
  const std::uint64_t v_extra = v_copy <= head_k * heads ? 0 : v_copy;
  peak.offer(resid + q_chain + kq + v_extra, "MLA attention scores (KQ)");
}

// Multi-head attention (build_attn_mha): the Q, K and V projections, then the attention output,
// with the scores in between without flash attention.
void offer_attention_peak(Peak& peak, const model::LayerFacts& layer, const GraphShape& shape,
                          const GraphRule& rule, const GraphSize& size) {
  const std::uint64_t tokens = size.tokens;
  const std::uint64_t resid = size.row;
  const std::uint64_t norm = size.row;
  const std::uint64_t head_k = layer.k_width / layer.head_count_kv;
  const std::uint64_t head_v = layer.v_width / layer.head_count_kv;
  const std::uint64_t q = std::uint64_t{layer.head_count} * head_k * tokens * kF32;
  const std::uint64_t q_all = rule.q_gate ? 2 * q : q;
  const std::uint64_t kv = (std::uint64_t{layer.k_width} + layer.v_width) * tokens * kF32;
  const std::uint64_t attn_out = std::uint64_t{layer.head_count} * head_v * tokens * kF32;
  const std::uint64_t gate = rule.q_gate ? attn_out : 0;
  const std::uint64_t cells = layer.sliding_window ? shape.swa_cells : shape.full_cells;
  if (shape.flash_attention) {
    // build_attn_mha, flash path: Q, K, V projections, then the f32 attention output.
    peak.offer(resid + std::max(norm + q_all + kv, q_all + gate + attn_out), "attention (flash)");
  } else {
    // build_attn_mha without flash attention: KQ = [n_kv, n_tokens, n_head] f32 (the
    // softmax runs in place), then KQV.
    // With an output gate (qwen35, qwen3next) the joint Q+gate projection has been split
    // into the normed Q and a contiguous gate by then and freed.
    const std::uint64_t kq = cells * tokens * layer.head_count * kF32;
    peak.offer(resid + q + gate + kq + attn_out, "attention scores (KQ)");
  }
}

// Offers the peak of every block of the graph (the MTP block alone in the MTP graph) but its
// feed-forward part.
void offer_layer_peaks(Peak& peak, const model::ModelFacts& model, const GraphShape& shape,
                       const GraphRule& rule, const GraphSize& size, bool mtp_graph) {
  for (const model::LayerFacts& layer : model.layers) {
    if (mtp_graph ? !layer.mtp : layer.mtp) {
      continue;
    }
    if (layer.recurrent) {
      peak.offer(gated_delta_net_peak(model, shape, size), "gated delta net");
    } else if (layer.head_count_kv == 0) {
      continue;
    } else if (model.mla && model.mla_latent_width < layer.k_width / layer.head_count_kv) {
      offer_mla_attention_peak(peak, model, layer, shape, size);
    } else {
      offer_attention_peak(peak, layer, shape, rule, size);
    }
  }
}

// FFN: build_ffn / build_moe_ffn. Gate and up are computed from the normed input, then the
// GLU: the normed input's block is freed before the GLU is placed, but it is smaller than an
// n_ff-wide tensor, so the GLU goes above it (ggml_dyn_tallocr best fit): residual + norm +
// gate + up + GLU is the high-water mark (measured exactly on llama and qwen3moe, CUDA build).
// A single-layer graph (the MTP block) has freed its inputs (mask, copies) by then.
Peak feed_forward_peak(const model::ModelFacts& model, const GraphRule& rule, const GraphSize& size,
                       bool mtp_graph) {
  const std::uint64_t tokens = size.tokens;
  const std::uint64_t resid = size.row;
  const std::uint64_t norm = size.row;
  Peak ffn_peak;
  if (model.ffn_width > 0 || (mtp_graph && model.mtp_ffn_width > 0)) {
    const std::uint64_t ff = (mtp_graph ? model.mtp_ffn_width : model.ffn_width) * tokens * kF32;
    const std::uint64_t live = rule.gated_ffn ? norm + 3 * ff : norm + ff;
    ffn_peak.offer(resid + live, "feed-forward");
  }
  if (!mtp_graph && model.expert_ffn_width > 0) {
    // build_moe_ffn: router logits and probabilities, then gate, up and GLU per used expert
    // ([n_ff_exp, n_expert_used, n_tokens] each), then down per used expert.
    const std::uint64_t used = std::max(1u, model.expert_used_count);
    const std::uint64_t ff = model.expert_ffn_width * used * tokens * kF32;
    const std::uint64_t router = 2 * std::uint64_t{model.expert_count} * tokens * kF32;
    const std::uint64_t down = model.embedding_length * used * tokens * kF32;
    const std::uint64_t live = std::max({norm + 3 * ff, norm + router + 2 * ff, ff + down});
    ffn_peak.offer(resid + live, "mixture of experts");
    if (model.shared_ffn_width > 0) {
      const std::uint64_t sh = model.shared_ffn_width * tokens * kF32;
      ffn_peak.offer(resid + norm + size.row + 3 * sh, "shared expert");
    }
  }
  return ffn_peak;
}

}  // namespace

std::uint32_t server_outputs_max(std::uint32_t batch, std::uint32_t slots,
                                 std::uint32_t draft_tokens) {
  const std::uint64_t total = std::uint64_t{slots} * (1 + std::uint64_t{draft_tokens});
  return static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(batch, total)));
}

ContextBuffers context_buffers(const model::ModelFacts& model, const GraphShape& shape,
                               PlanBackend backend, bool mtp_graph) {
  const GraphRule& rule = rule_of(model.architecture);
  const GraphSize size = graph_size(model, shape);
  const GraphInputTotals inputs = graph_inputs(model, shape, rule, size, mtp_graph);

  Peak peak;
  if (inputs.per_layer_input > 0) {
    peak.offer(2 * inputs.per_layer_input, "per-layer inputs");
  }
  offer_layer_peaks(peak, model, shape, rule, size, mtp_graph);
  const Peak ffn_peak = feed_forward_peak(model, rule, size, mtp_graph);
  if (mtp_graph) {
    // graph_mtp: normed embedding and hidden state, their concat, the eh projection.
    peak.offer(4 * size.row, "MTP input projection");
  }
  // The head: logits [n_vocab, n_outputs] f32 (a graph output, never freed).
  peak.offer(
      2 * model.embedding_length * size.outputs * kF32 + model.vocab_size * size.outputs * kF32,
      "output head");

  ContextBuffers buffers;
  // The inputs stay in the CUDA_Host buffer (set on the host) together with the
  // token-embedding lookup, which runs on the CPU (tok_embd is not offloaded); the device
  // buffer holds copies of the inputs (not the token ids) and the graph.
  // In the MTP graph `h` and the token lookup are normed in place at once and only the mask,
  // indices and positions stay alive through the block.
  // On the CPU the token lookup's output sits right above the inputs and leaves a block of
  // one row there that the larger tensors of the layers cannot use.
  const std::uint64_t token_ids = size.tokens * kI32;
  const std::uint64_t held = mtp_graph                      ? inputs.bytes - token_ids - size.row
                             : backend == PlanBackend::cuda ? inputs.bytes - token_ids
                                                            : inputs.bytes + size.row;
  const std::uint64_t ffn_total = mtp_graph ? ffn_peak.bytes : held + ffn_peak.bytes;
  const std::uint64_t other_total = held + peak.bytes;
  buffers.peak_phase = std::string(ffn_total > other_total ? ffn_peak.phase : peak.phase);
  std::uint64_t graph = std::max(ffn_total, other_total);
  // The plain architectures are replayed tensor by tensor instead (layer_graph.hpp): the phase
  // peaks above miss the allocator's fragmentation, which decides where a large MoE down
  // projection lands.
  if (!mtp_graph) {
    const GraphInputs parts{token_ids, size.row, inputs.copies};
    if (const auto replayed =
            replay_main_graph(model, shape, backend, size.tokens, size.outputs, parts)) {
      graph = replayed->bytes;
      buffers.peak_phase = replayed->peak_phase;
    }
  }
  if (backend == PlanBackend::cuda) {
    buffers.compute_host =
        inputs.bytes + cpu_side_peak(model, shape, size.tokens, size.outputs, mtp_graph);
    buffers.compute_device = graph;
  } else {
    buffers.compute_host = graph;
  }

  // llama_context::output_reserve: n_vocab logits per output row; n_seq_max rows when the
  // context is created, n_outputs_max once a decode needs them.
  const std::uint64_t rows = std::max<std::uint64_t>(size.slots, shape.outputs_max);
  buffers.output = model.vocab_size * rows * kF32;
  buffers.output_at_start = model.vocab_size * size.slots * kF32;
  return buffers;
}

}  // namespace gb10tune::plan
