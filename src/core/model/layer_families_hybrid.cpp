// The hybrid families' rules: recurrent (gated delta net, Mamba-2) layers beside attention
// layers, in llama_memory_hybrid with create_memory's layer filters (llama.cpp 2026-08,
// 3f545be).
#include <fmt/format.h>

#include <array>
#include <string_view>
#include <utility>

#include "layer_families.hpp"

namespace gb10tune::model::detail {

namespace {

// The SSM sizes of a recurrent layer (<arch>.ssm.*).
struct SsmSizes {
  std::uint64_t d_conv = 0;   // ssm.conv_kernel
  std::uint64_t d_inner = 0;  // ssm.inner_size
  std::uint64_t d_state = 0;  // ssm.state_size
  std::uint64_t dt_rank = 0;  // ssm.time_step_rank
  std::uint64_t n_group = 0;  // ssm.group_count
};

// The SSM sizes every Mamba-2 / gated-delta-net loader reads (all required).
Expected<SsmSizes> read_ssm_sizes(const Hparams& hp) {
  SsmSizes ssm;
  const std::array<std::pair<std::string_view, std::uint64_t*>, 5> keys{{
      {"ssm.conv_kernel", &ssm.d_conv},
      {"ssm.inner_size", &ssm.d_inner},
      {"ssm.state_size", &ssm.d_state},
      {"ssm.time_step_rank", &ssm.dt_rank},
      {"ssm.group_count", &ssm.n_group},
  }};
  for (const auto& [key, target] : keys) {
    const auto value = hp.u32(key);
    if (!value) {
      return value.error();
    }
    *target = *value;
  }
  return ssm;
}

// Recurrent state: llama_memory_recurrent allocates, per layer with il < n_layer() &&
// is_recr(il), an f32 row of n_embd_r() and one of n_embd_s() per cell, where
// (llama_hparams::n_embd_r / n_embd_s for SSM-style layers, gated delta net included)
//   n_embd_r = (ssm_d_conv - 1) × (ssm_d_inner + 2 × ssm_n_group × ssm_d_state)
//   n_embd_s = ssm_d_state × ssm_d_inner
// An Error names the first figure that overflows 64 bits. Needs recurrent_layer_count.
Status set_recurrent_state(const Hparams& hp, const SsmSizes& ssm, ModelFacts& facts) {
  const auto overflow = [&](std::string_view what) {
    return Error{fmt::format("{}: {} overflows 64 bits; the hyperparameters are corrupt",
                             hp.file().source(), what)};
  };
  std::uint64_t groups = 0;
  std::uint64_t conv_channels = 0;
  std::uint64_t r = 0;
  std::uint64_t s = 0;
  std::uint64_t widths = 0;
  std::uint64_t per_layer = 0;
  std::uint64_t total = 0;
  if (__builtin_mul_overflow(2 * ssm.n_group, ssm.d_state, &groups)) {
    return overflow("2 × ssm.group_count × ssm.state_size");
  }
  if (__builtin_add_overflow(ssm.d_inner, groups, &conv_channels) ||
      __builtin_mul_overflow(ssm.d_conv > 0 ? ssm.d_conv - 1 : 0, conv_channels, &r)) {
    return overflow("the conv state size");
  }
  if (__builtin_mul_overflow(ssm.d_state, ssm.d_inner, &s)) {
    return overflow("the delta state size");
  }
  if (__builtin_add_overflow(r, s, &widths) || __builtin_mul_overflow(widths, 4, &per_layer) ||
      __builtin_mul_overflow(per_layer, facts.recurrent_layer_count, &total)) {
    return overflow("the recurrent state size");
  }
  facts.ssm_conv_kernel = static_cast<std::uint32_t>(ssm.d_conv);
  facts.ssm_inner_size = static_cast<std::uint32_t>(ssm.d_inner);
  facts.ssm_state_size = static_cast<std::uint32_t>(ssm.d_state);
  facts.ssm_group_count = static_cast<std::uint32_t>(ssm.n_group);
  facts.ssm_time_step_rank = static_cast<std::uint32_t>(ssm.dt_rank);
  facts.conv_state_width = r;
  facts.ssm_state_width = s;
  facts.recurrent_bytes_per_sequence = total;
  return {};
}

// What every hybrid ends with: the layers' widths, then the recurrent state they hold.
Status finish_hybrid(const FamilyInput& in, const SsmSizes& ssm, ModelFacts& facts) {
  facts.recurrent_rollback = in.rule.rollback;
  if (Status layers = finish_layers(in, facts); !layers) {
    return layers;
  }
  return set_recurrent_state(in.hp, ssm, facts);
}

}  // namespace

// src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp load_arch_hparams: SSM sizes, nextn
// (MTP) blocks past the main stack, and the recurrent layers: recurrent_layers, else all but
// every full_attention_interval-th (default 4). create_memory's filter_attn keeps KV for
// il < n_layer() && !is_recr(il): the MTP blocks get theirs in the draft context.
Status apply_qwen_hybrid(const FamilyInput& in, ModelFacts& facts) {
  const Hparams& hp = in.hp;
  const auto ssm = read_ssm_sizes(hp);
  const auto nextn = read_nextn_count(hp, facts.block_count);
  if (const auto failed = first_error(ssm, nextn)) {
    return *failed;
  }
  facts.mtp_layer_count = *nextn;
  facts.main_layer_count = facts.block_count - *nextn;

  if (hp.has("attention.recurrent_layers")) {
    const auto flags = hp.per_layer("attention.recurrent_layers", facts.block_count);
    if (!flags) {
      return flags.error();
    }
    for (LayerFacts& layer : facts.layers) {
      layer.recurrent = (*flags)[layer.index] != 0;
    }
  } else {
    const auto interval = hp.u32_or("full_attention_interval", 4);
    if (!interval) {
      return interval.error();
    }
    if (*interval == 0) {
      return hp.error("full_attention_interval",
                      "is 0; llama.cpp would divide by zero, so the file is corrupt");
    }
    for (LayerFacts& layer : facts.layers) {
      layer.recurrent = layer.index < facts.main_layer_count && (layer.index + 1) % *interval != 0;
    }
  }
  for (LayerFacts& layer : facts.layers) {
    layer.main_kv = layer.index < facts.main_layer_count && !layer.recurrent;
  }
  return finish_hybrid(in, *ssm, facts);
}

// src/models/nemotron-h.cpp (nemotron_h_moe too): a block is Mamba-2 (recurrent) when
// head_count_kv and feed_forward_length are both 0, attention when only feed_forward_length
// is 0 (filter_attn: !is_recr(il) && n_ff(il) == 0), else MLP-only with no cache. nextn
// blocks are appended past the main stack; where llama.cpp caches them is not checked, so a
// model with them is unsupported rather than guessed.
Status apply_nemotron_h(const FamilyInput& in, ModelFacts& facts) {
  const Hparams& hp = in.hp;
  // feed_forward_length is read like head_count (get_key_or_arr over every block).
  const auto n_ff = hp.per_layer_or("feed_forward_length", facts.block_count,
                                    std::vector<std::uint32_t>(facts.block_count, 0));
  const auto ssm = read_ssm_sizes(hp);
  const auto nextn = hp.u32_or("nextn_predict_layers", 0);
  if (const auto failed = first_error(n_ff, ssm, nextn)) {
    return *failed;
  }
  if (*nextn > 0) {
    facts.unsupported_reason = fmt::format(
        "{} with MTP blocks ({}.nextn_predict_layers = {}): where llama.cpp caches "
        "them is not covered by gb10tune's layer rules yet",
        facts.architecture, facts.architecture, *nextn);
    facts.layers.clear();
    return {};
  }
  for (LayerFacts& layer : facts.layers) {
    const bool mlp_only = (*n_ff)[layer.index] != 0;
    layer.recurrent = in.attention.n_head_kv[layer.index] == 0 && !mlp_only;
    layer.main_kv = !layer.recurrent && !mlp_only;
  }
  return finish_hybrid(in, *ssm, facts);
}

// src/models/granite-hybrid.cpp: a block is Mamba-2 when head_count_kv is 0, attention
// otherwise (the hybrid memory's default filter_attn: !is_recr(il)).
Status apply_granite_hybrid(const FamilyInput& in, ModelFacts& facts) {
  const auto ssm = read_ssm_sizes(in.hp);
  if (!ssm) {
    return ssm.error();
  }
  for (LayerFacts& layer : facts.layers) {
    layer.recurrent = in.attention.n_head_kv[layer.index] == 0;
    layer.main_kv = !layer.recurrent;
  }
  return finish_hybrid(in, *ssm, facts);
}

}  // namespace gb10tune::model::detail
