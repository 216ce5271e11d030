// The attention families' rules: plain, sliding-window, chunked, latent and shared-KV caches
// (each from the llama.cpp file named beside it; llama.cpp 2026-08, 3f545be).
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "layer_families.hpp"

namespace gb10tune::model::detail {

namespace {

// llama_hparams::set_swa_pattern(n_pattern, dense_first = false): within the main stack a
// layer is SWA unless it is the last of each group of n_pattern (n_pattern 0: all SWA);
// MTP blocks are never SWA.
void set_swa_pattern(std::vector<LayerFacts>& layers, std::uint32_t n_layer,
                     std::uint32_t n_pattern) {
  for (LayerFacts& layer : layers) {
    const std::uint32_t il = layer.index;
    layer.sliding_window = il < n_layer && (n_pattern == 0 || il % n_pattern < n_pattern - 1);
  }
}

// The period of the sliding-window pattern: a scalar <arch>.attention.sliding_window_pattern,
// else `fallback` (llama.cpp ignores an array there).
Expected<std::uint32_t> swa_period(const Hparams& hp, std::uint32_t fallback) {
  if (!hp.has("attention.sliding_window_pattern") ||
      hp.is_array("attention.sliding_window_pattern")) {
    return fallback;
  }
  return hp.u32("attention.sliding_window_pattern");
}

// The sliding window of an architecture with a SwaSpec (its load_arch_hparams): whether the
// window applies, its size and the period of set_swa_pattern.
Status apply_swa_spec(const Hparams& hp, const SwaSpec& spec, ModelFacts& facts) {
  const bool present = hp.has("attention.sliding_window");
  std::uint32_t window = 0;
  switch (spec.key) {
    case SwaKey::none:
      return {};
    case SwaKey::required: {
      const auto n_swa = hp.u32("attention.sliding_window");
      if (!n_swa) {
        return n_swa.error();
      }
      window = *n_swa;
      break;
    }
    case SwaKey::present_positive:
    case SwaKey::default_window: {
      const auto n_swa = hp.u32_or("attention.sliding_window", 0);
      if (!n_swa) {
        return n_swa.error();
      }
      if (spec.key == SwaKey::present_positive && (!present || *n_swa == 0)) {
        return {};
      }
      window = present ? *n_swa : spec.window;
      break;
    }
  }
  facts.sliding_window = window;
  const auto period = swa_period(hp, spec.period);
  if (!period) {
    return period.error();
  }
  set_swa_pattern(facts.layers, facts.main_layer_count, *period);
  return {};
}

// llama_hparams::n_layer_kv_from_start: only the first `kv_from_start` layers keep KV; the
// others reuse an earlier layer's cache (create_memory's reuse callback) and hold none.
void share_kv_from(std::uint32_t kv_from_start, ModelFacts& facts) {
  for (LayerFacts& layer : facts.layers) {
    layer.main_kv = layer.index < kv_from_start;
    layer.kv_shared = !layer.main_kv;
  }
}

// gemma4's create_memory reuse callback: a shared SWA layer reuses layer kv_from_start - 2, a
// shared full one layer kv_from_start - 1; llama.cpp asserts that layer is in the same (SWA or
// full) cache.
Status check_gemma4_reuse(const Hparams& hp, std::uint32_t kv_from_start, const ModelFacts& facts) {
  for (std::uint32_t il = kv_from_start; il < facts.block_count; ++il) {
    const bool swa = facts.layers[il].sliding_window;
    const std::uint32_t source = kv_from_start - (swa ? 2 : 1);
    if (facts.layers[source].sliding_window != swa) {
      return hp.error(
          "attention.sliding_window_pattern",
          fmt::format("makes shared layer {} ({}) reuse layer {} ({}); llama.cpp asserts "
                      "that the last two layers with KV are a sliding-window one and then "
                      "a full one, so the file is corrupt",
                      il, swa ? "sliding window" : "full", source,
                      swa ? "full" : "sliding window"));
    }
  }
  return {};
}

}  // namespace

// Plain attention: create_memory's default llama_kv_cache over every block.
Status apply_dense(const FamilyInput& in, ModelFacts& facts) {
  return finish_layers(in, facts);
}

// Sliding-window layers by the architecture's SwaSpec, the rest as dense.
Status apply_swa(const FamilyInput& in, ModelFacts& facts) {
  if (Status swa = apply_swa_spec(in.hp, in.rule.swa, facts); !swa) {
    return swa;
  }
  return finish_layers(in, facts);
}

// src/models/llama4.cpp: chunked attention (LLAMA_SWA_TYPE_CHUNKED) unless sliding_window is
// present and 0; the chunk is 8192 whatever the key says, the period a scalar
// sliding_window_pattern, default 4 (3 chunked, 1 full). The chunked cache is sized like an
// SWA one (llama_kv_cache_iswa).
Status apply_llama4(const FamilyInput& in, ModelFacts& facts) {
  const bool present = in.hp.has("attention.sliding_window");
  const auto n_swa = in.hp.u32_or("attention.sliding_window", 0);
  if (!n_swa) {
    return n_swa.error();
  }
  if (!present || *n_swa > 0) {
    facts.sliding_window = 8192;
    const auto period = swa_period(in.hp, 4);
    if (!period) {
      return period.error();
    }
    set_swa_pattern(facts.layers, facts.main_layer_count, *period);
  }
  return finish_layers(in, facts);
}

// src/models/deepseek2.cpp: MLA when key_length_mla and value_length_mla are both set
// (llama_hparams::is_mla). The cache then holds, per token and layer, only K of
// n_embd_head_k × n_head_kv (the converter writes key_length = kv_lora_rank + n_rot and
// head_count_kv = 1) and no V (llama_kv_cache: has_v = !is_mla). Without the two keys (older
// conversions) K and V are cached like plain attention.
Status apply_mla(const FamilyInput& in, ModelFacts& facts) {
  const auto k_mla = in.hp.u32_or("attention.key_length_mla", 0);
  const auto v_mla = in.hp.u32_or("attention.value_length_mla", 0);
  if (const auto failed = first_error(k_mla, v_mla)) {
    return *failed;
  }
  if ((*k_mla == 0) != (*v_mla == 0)) {
    return in.hp.error(*k_mla == 0 ? "attention.value_length_mla" : "attention.key_length_mla",
                       "is set without its partner (key_length_mla and value_length_mla "
                       "come together); llama.cpp asserts on this file");
  }
  facts.mla = *k_mla != 0;
  if (facts.mla) {
    const auto latent = in.hp.u32("attention.kv_lora_rank");
    if (!latent) {
      return latent.error();
    }
    facts.mla_latent_width = *latent;
    facts.mla_q_width = *k_mla;
  }
  return finish_layers(in, facts);
}

// src/models/gemma3n.cpp: SWA by its SwaSpec (period 5); n_layer_kv_from_start = 20 whatever
// the layer count (llama_hparams::has_kv).
Status apply_gemma3n(const FamilyInput& in, ModelFacts& facts) {
  if (Status swa = apply_swa_spec(in.hp, in.rule.swa, facts); !swa) {
    return swa;
  }
  share_kv_from(std::min<std::uint32_t>(20, facts.block_count), facts);
  return finish_layers(in, facts);
}

// src/models/gemma4.cpp: SWA flags from sliding_window_pattern (a bool per layer, or one
// scalar for all), required, as are sliding_window and the SWA head sizes; shared_kv_layers
// (default 0) trailing layers reuse earlier KV.
Status apply_gemma4(const FamilyInput& in, ModelFacts& facts) {
  const Hparams& hp = in.hp;
  const auto n_swa = hp.u32("attention.sliding_window");
  if (!n_swa) {
    return n_swa.error();
  }
  for (const std::string_view key : {std::string_view("attention.key_length_swa"),
                                     std::string_view("attention.value_length_swa")}) {
    if (!hp.has(key)) {
      return hp.error(key, "is missing; llama.cpp requires it for gemma4");
    }
  }
  const auto flags = hp.per_layer("attention.sliding_window_pattern", facts.block_count);
  const auto shared = hp.u32_or("attention.shared_kv_layers", 0);
  if (const auto failed = first_error(flags, shared)) {
    return *failed;
  }
  facts.sliding_window = *n_swa;
  for (LayerFacts& layer : facts.layers) {
    layer.sliding_window = (*flags)[layer.index] != 0;
  }
  if (*shared > 0) {
    // create_memory's reuse callback asserts n_layer_kv_from_start >= 2.
    if (*shared + 2 > facts.block_count) {
      return hp.error("attention.shared_kv_layers",
                      fmt::format("is {} of {} layers; llama.cpp needs at least 2 layers "
                                  "with their own KV, so the file is corrupt",
                                  *shared, facts.block_count));
    }
    const std::uint32_t kv_from_start = facts.block_count - *shared;
    if (Status reuse = check_gemma4_reuse(hp, kv_from_start, facts); !reuse) {
      return reuse;
    }
    share_kv_from(kv_from_start, facts);
  }
  return finish_layers(in, facts);
}

}  // namespace gb10tune::model::detail
