// Layer rules, each from the llama.cpp function named beside it (llama.cpp 2026-08, 3f545be).
#include "layer_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <string>

namespace gb10tune::model::detail {

namespace {

constexpr std::uint32_t kMaxLayers = 512;  // LLAMA_MAX_LAYERS (src/llama-hparams.h)

// How an architecture's caches are laid out; everything else about its layers (per-layer
// head counts, key/value lengths, nextn blocks) comes from the GGUF's own keys.
enum class Family {
  dense,        // every block keeps K and V; widths from head_count_kv × key/value_length
  gemma3,       // sliding-window layers when attention.sliding_window > 0 (period 6)
  gpt_oss,      // sliding-window layers, period 2
  llama4,       // chunked attention: 8192-token chunks on 3 of every 4 layers
  mla,          // multi-head latent attention: K holds kv_lora_rank + n_rot, no V
  qwen_hybrid,  // gated delta net layers with recurrent state, full attention every Nth
};

// One supported architecture: the exceptions table. `source` is the llama.cpp file whose
// load_arch_hparams (and llama_model::create_memory, src/llama-model.cpp) the rule follows.
struct ArchRule {
  std::string_view name;
  Family family;
  bool rollback;  // llm_arch_supports_rs_rollback (src/llama-arch.cpp)
  std::string_view source;
};

constexpr std::array kArchitectures{
    ArchRule{"llama", Family::dense, false, "src/models/llama.cpp"},
    ArchRule{"qwen2", Family::dense, false, "src/models/qwen2.cpp"},
    ArchRule{"qwen3", Family::dense, false, "src/models/qwen3.cpp"},
    ArchRule{"qwen3moe", Family::dense, false, "src/models/qwen3moe.cpp"},
    ArchRule{"qwen35", Family::qwen_hybrid, true, "src/models/qwen35.cpp"},
    ArchRule{"qwen35moe", Family::qwen_hybrid, true, "src/models/qwen35moe.cpp"},
    ArchRule{"qwen3next", Family::qwen_hybrid, false, "src/models/qwen3next.cpp"},
    ArchRule{"gemma3", Family::gemma3, false, "src/models/gemma3.cpp"},
    ArchRule{"gpt-oss", Family::gpt_oss, false, "src/models/openai-moe.cpp"},
    // Plain attention: no filter, reuse or SWA in create_memory, so every block (nextn
    // blocks of glm4moe included) keeps a cache of n_embd_k_gqa(il) + n_embd_v_gqa(il).
    ArchRule{"glm4moe", Family::dense, false, "src/models/glm4-moe.cpp"},
    ArchRule{"mistral3", Family::dense, false, "src/models/mistral3.cpp"},
    ArchRule{"seed_oss", Family::dense, false, "src/models/seed-oss.cpp"},
    ArchRule{"qwen3vl", Family::dense, false, "src/models/qwen3vl.cpp"},
    ArchRule{"qwen3vlmoe", Family::dense, false, "src/models/qwen3vlmoe.cpp"},
    ArchRule{"minimax-m2", Family::dense, false, "src/models/minimax-m2.cpp"},
    ArchRule{"llama4", Family::llama4, false, "src/models/llama4.cpp"},
    ArchRule{"deepseek2", Family::mla, false, "src/models/deepseek2.cpp"},
};

const ArchRule* find_rule(std::string_view architecture) {
  for (const ArchRule& rule : kArchitectures) {
    if (rule.name == architecture) {
      return &rule;
    }
  }
  return nullptr;
}

// Metadata lookups for one architecture, with llama.cpp's uint32 range.
class Hparams {
 public:
  Hparams(const gguf::GgufFile& file, std::string_view arch) : m_file(file), m_arch(arch) {}

  std::string key(std::string_view suffix) const { return fmt::format("{}.{}", m_arch, suffix); }
  bool has(std::string_view suffix) const { return m_file.has(key(suffix)); }

  Expected<std::uint32_t> u32(std::string_view suffix) const {
    const std::string name = key(suffix);
    const auto value = m_file.get_uint(name);
    if (!value) {
      return value.error();
    }
    return fit(name, *value);
  }

  Expected<std::uint32_t> u32_or(std::string_view suffix, std::uint32_t fallback) const {
    return has(suffix) ? u32(suffix) : Expected<std::uint32_t>(fallback);
  }

  // llama_model_loader::get_key_or_arr: a scalar for every layer or one value per layer.
  Expected<std::vector<std::uint32_t>> per_layer(std::string_view suffix, std::size_t n) const {
    const std::string name = key(suffix);
    const auto values = m_file.get_uint_per_layer(name, n);
    if (!values) {
      return values.error();
    }
    std::vector<std::uint32_t> result;
    result.reserve(values->size());
    for (const std::uint64_t value : *values) {
      const auto narrow = fit(name, value);
      if (!narrow) {
        return narrow.error();
      }
      result.push_back(*narrow);
    }
    return result;
  }

  // True when the key holds an array (llama.cpp's scalar-only get_key_or_arr then ignores it).
  bool is_array(std::string_view suffix) const {
    const gguf::MetadataEntry* entry = m_file.find(key(suffix));
    return entry != nullptr && entry->value.type() == gguf::ValueType::array;
  }

  Error error(std::string_view suffix, std::string_view problem) const {
    const std::string name = key(suffix);
    const gguf::MetadataEntry* entry = m_file.find(name);
    if (entry == nullptr) {
      return Error{fmt::format("{}: key '{}' {}", m_file.source(), name, problem)};
    }
    return Error{
        fmt::format("{}: offset {}: key '{}' {}", m_file.source(), entry->offset, name, problem)};
  }

 private:
  Expected<std::uint32_t> fit(const std::string& name, std::uint64_t value) const {
    if (value > std::numeric_limits<std::uint32_t>::max()) {
      return Error{
          fmt::format("{}: key '{}' is {}, more than llama.cpp's uint32 allows; the "
                      "file is corrupt",
                      m_file.source(), name, value)};
    }
    return static_cast<std::uint32_t>(value);
  }

  const gguf::GgufFile& m_file;
  std::string_view m_arch;
};

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

Expected<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b, const gguf::GgufFile& file,
                                    std::string_view what) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    return Error{fmt::format("{}: {} overflows 64 bits; the hyperparameters are corrupt",
                             file.source(), what)};
  }
  return product;
}

Expected<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b, const gguf::GgufFile& file,
                                    std::string_view what) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return Error{fmt::format("{}: {} overflows 64 bits; the hyperparameters are corrupt",
                             file.source(), what)};
  }
  return sum;
}

// The SSM sizes of a gated-delta-net layer (<arch>.ssm.*).
struct SsmSizes {
  std::uint64_t d_conv = 0;   // ssm.conv_kernel
  std::uint64_t d_inner = 0;  // ssm.inner_size
  std::uint64_t d_state = 0;  // ssm.state_size
  std::uint64_t dt_rank = 0;  // ssm.time_step_rank
  std::uint64_t n_group = 0;  // ssm.group_count
};

// The hybrid Qwen rules (src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp
// load_arch_hparams): SSM sizes, nextn blocks, recurrent layers.
// The period of the sliding-window pattern: a scalar <arch>.attention.sliding_window_pattern,
// else `fallback` (llama.cpp ignores an array there).
Expected<std::uint32_t> swa_period(const Hparams& hp, std::uint32_t fallback) {
  if (!hp.has("attention.sliding_window_pattern") ||
      hp.is_array("attention.sliding_window_pattern")) {
    return fallback;
  }
  return hp.u32("attention.sliding_window_pattern");
}

Status apply_qwen_hybrid(const Hparams& hp, ModelFacts& facts, std::vector<bool>& recurrent,
                         SsmSizes& ssm) {
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
  const auto nextn = hp.u32_or("nextn_predict_layers", 0);
  if (!nextn) {
    return nextn.error();
  }
  if (*nextn >= facts.block_count) {
    return hp.error("nextn_predict_layers",
                    fmt::format("is {}, but it must be less than block_count ({}) as llama.cpp "
                                "asserts",
                                *nextn, facts.block_count));
  }
  facts.mtp_layer_count = *nextn;
  facts.main_layer_count = facts.block_count - *nextn;

  if (hp.has("attention.recurrent_layers")) {
    const auto flags = hp.per_layer("attention.recurrent_layers", facts.block_count);
    if (!flags) {
      return flags.error();
    }
    for (std::size_t il = 0; il < flags->size(); ++il) {
      recurrent[il] = (*flags)[il] != 0;
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
    for (std::uint32_t il = 0; il < facts.block_count; ++il) {
      recurrent[il] = il < facts.main_layer_count && (il + 1) % *interval != 0;
    }
  }
  return {};
}

}  // namespace

std::string_view supported_architectures() {
  static const std::string names = [] {
    std::string joined;
    for (const ArchRule& rule : kArchitectures) {
      joined += joined.empty() ? "" : ", ";
      joined += rule.name;
    }
    return joined;
  }();
  return names;
}

std::string_view nearest_supported_architecture(std::string_view architecture) {
  // The longest common prefix wins (a family's variants share a stem: "qwen2moe" is closest
  // to "qwen2"); ties and prefix-less names go to the smallest edit distance.
  const auto prefix = [&](std::string_view name) {
    std::size_t n = 0;
    while (n < name.size() && n < architecture.size() && name[n] == architecture[n]) {
      ++n;
    }
    return n;
  };
  const auto distance = [&](std::string_view name) {
    std::vector<std::size_t> row(name.size() + 1);
    for (std::size_t j = 0; j <= name.size(); ++j) {
      row[j] = j;
    }
    for (std::size_t i = 1; i <= architecture.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= name.size(); ++j) {
        const std::size_t above = row[j];
        const std::size_t substitute = diagonal + (architecture[i - 1] == name[j - 1] ? 0 : 1);
        row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
        diagonal = above;
      }
    }
    return row[name.size()];
  };
  const ArchRule* best = &kArchitectures.front();
  for (const ArchRule& rule : kArchitectures) {
    const std::size_t p = prefix(rule.name);
    const std::size_t best_p = prefix(best->name);
    if (p > best_p || (p == best_p && distance(rule.name) < distance(best->name))) {
      best = &rule;
    }
  }
  return best->name;
}

bool is_supported_architecture(std::string_view architecture) {
  return find_rule(architecture) != nullptr;
}

Status apply_layer_rules(const gguf::GgufFile& file, ModelFacts& facts) {
  const ArchRule* rule = find_rule(facts.architecture);
  if (rule == nullptr) {
    return Error{
        fmt::format("{}: architecture '{}' has no layer rules", file.source(), facts.architecture)};
  }
  const Hparams hp(file, facts.architecture);

  // llama_model::load_hparams (src/llama-model.cpp): the keys every architecture reads.
  const auto n_ctx_train = hp.u32("context_length");
  if (!n_ctx_train) {
    return n_ctx_train.error();
  }
  facts.context_length = *n_ctx_train;
  const auto n_embd = hp.u32("embedding_length");
  if (!n_embd) {
    return n_embd.error();
  }
  facts.embedding_length = *n_embd;
  const auto n_layer_all = hp.u32("block_count");
  if (!n_layer_all) {
    return n_layer_all.error();
  }
  if (*n_layer_all == 0 || *n_layer_all > kMaxLayers) {
    return hp.error("block_count", fmt::format("is {}; llama.cpp accepts 1 to {} layers",
                                               *n_layer_all, kMaxLayers));
  }
  facts.block_count = *n_layer_all;
  facts.main_layer_count = *n_layer_all;

  const auto n_expert = hp.u32_or("expert_count", 0);
  if (!n_expert) {
    return n_expert.error();
  }
  const auto n_expert_used = hp.u32_or("expert_used_count", 0);
  if (!n_expert_used) {
    return n_expert_used.error();
  }
  if (*n_expert_used > *n_expert || (*n_expert > 0 && *n_expert_used == 0)) {
    return hp.error("expert_used_count",
                    fmt::format("is {} with expert_count {}; llama.cpp requires 0 < used <= "
                                "count for MoE models and 0 for dense ones",
                                *n_expert_used, *n_expert));
  }
  facts.expert_count = *n_expert;
  facts.expert_used_count = *n_expert_used;

  // Per-layer head counts, read before any nextn blocks are known (n_layer() = n_layer_all
  // then), so arrays hold one entry per block, MTP blocks included.
  std::vector<std::uint32_t> n_head(facts.block_count, 0);
  if (hp.has("attention.head_count")) {
    auto values = hp.per_layer("attention.head_count", facts.block_count);
    if (!values) {
      return values.error();
    }
    n_head = std::move(*values);
  }
  std::vector<std::uint32_t> n_head_kv = n_head;  // head_count_kv defaults to head_count
  if (hp.has("attention.head_count_kv")) {
    auto values = hp.per_layer("attention.head_count_kv", facts.block_count);
    if (!values) {
      return values.error();
    }
    n_head_kv = std::move(*values);
  }

  // Head sizes: n_embd / n_head(0) unless key_length / value_length say otherwise; SWA
  // layers may override them with key_length_swa / value_length_swa.
  std::uint32_t head_k = 0;
  std::uint32_t head_v = 0;
  if (n_head[0] > 0) {
    const auto k = hp.u32_or("attention.key_length", *n_embd / n_head[0]);
    const auto v = hp.u32_or("attention.value_length", *n_embd / n_head[0]);
    if (!k) {
      return k.error();
    }
    if (!v) {
      return v.error();
    }
    head_k = *k;
    head_v = *v;
  }
  const auto head_k_swa = hp.u32_or("attention.key_length_swa", head_k);
  if (!head_k_swa) {
    return head_k_swa.error();
  }
  const auto head_v_swa = hp.u32_or("attention.value_length_swa", head_v);
  if (!head_v_swa) {
    return head_v_swa.error();
  }

  facts.layers.assign(facts.block_count, LayerFacts{});
  for (std::uint32_t il = 0; il < facts.block_count; ++il) {
    facts.layers[il].index = il;
  }
  std::vector<bool> recurrent(facts.block_count, false);
  SsmSizes ssm;

  switch (rule->family) {
    case Family::dense:
      break;
    case Family::gemma3: {
      // src/models/gemma3.cpp: SWA only when sliding_window is present and > 0; the period
      // comes from a scalar sliding_window_pattern (an array is ignored), default 6.
      const auto n_swa = hp.u32_or("attention.sliding_window", 0);
      if (!n_swa) {
        return n_swa.error();
      }
      if (*n_swa > 0) {
        facts.sliding_window = *n_swa;
        const auto period = swa_period(hp, 6);
        if (!period) {
          return period.error();
        }
        set_swa_pattern(facts.layers, facts.main_layer_count, *period);
      }
      break;
    }
    case Family::gpt_oss: {
      // src/models/openai-moe.cpp: sliding_window is required; period 2 unless a scalar
      // sliding_window_pattern says otherwise.
      const auto n_swa = hp.u32("attention.sliding_window");
      if (!n_swa) {
        return n_swa.error();
      }
      facts.sliding_window = *n_swa;
      const auto period = swa_period(hp, 2);
      if (!period) {
        return period.error();
      }
      set_swa_pattern(facts.layers, facts.main_layer_count, *period);
      break;
    }
    case Family::llama4: {
      // src/models/llama4.cpp: chunked attention (LLAMA_SWA_TYPE_CHUNKED) unless
      // sliding_window is present and 0; the chunk is 8192 whatever the key says, the
      // period a scalar sliding_window_pattern, default 4 (3 chunked, 1 full). The chunked
      // cache is sized like an SWA one (llama_kv_cache_iswa).
      const bool present = hp.has("attention.sliding_window");
      const auto n_swa = hp.u32_or("attention.sliding_window", 0);
      if (!n_swa) {
        return n_swa.error();
      }
      if (!present || *n_swa > 0) {
        facts.sliding_window = 8192;
        const auto period = swa_period(hp, 4);
        if (!period) {
          return period.error();
        }
        set_swa_pattern(facts.layers, facts.main_layer_count, *period);
      }
      break;
    }
    case Family::mla: {
      // src/models/deepseek2.cpp: MLA when key_length_mla and value_length_mla are both
      // set (llama_hparams::is_mla). The cache then holds, per token and layer, only K of
      // n_embd_head_k × n_head_kv (the converter writes key_length = kv_lora_rank + n_rot
      // and head_count_kv = 1) and no V (llama_kv_cache: has_v = !is_mla). Without the
      // two keys (older conversions) K and V are cached like plain attention.
      const auto k_mla = hp.u32_or("attention.key_length_mla", 0);
      const auto v_mla = hp.u32_or("attention.value_length_mla", 0);
      if (!k_mla) {
        return k_mla.error();
      }
      if (!v_mla) {
        return v_mla.error();
      }
      if ((*k_mla == 0) != (*v_mla == 0)) {
        return hp.error(*k_mla == 0 ? "attention.value_length_mla" : "attention.key_length_mla",
                        "is set without its partner (key_length_mla and value_length_mla "
                        "come together); llama.cpp asserts on this file");
      }
      facts.mla = *k_mla != 0;
      break;
    }
    case Family::qwen_hybrid: {
      if (Status s = apply_qwen_hybrid(hp, facts, recurrent, ssm); !s) {
        return s;
      }
      facts.recurrent_rollback = rule->rollback;
      break;
    }
  }

  // Layers and KV widths: llama_hparams::n_embd_k_gqa / n_embd_v_gqa
  // (src/llama-hparams.cpp) = n_embd_head_{k,v}(il) × n_head_kv(il), the head size being the
  // SWA one on SWA layers. Which layers keep KV: llama_model::create_memory — hybrid Qwen
  // models keep it for il < n_layer() && !is_recr(il) (the MTP blocks get theirs in the
  // draft context); every other architecture here keeps it for every block.
  const bool hybrid = rule->family == Family::qwen_hybrid;
  for (LayerFacts& layer : facts.layers) {
    const std::uint32_t il = layer.index;
    layer.mtp = il >= facts.main_layer_count;
    layer.recurrent = recurrent[il];
    layer.head_count = n_head[il];
    layer.head_count_kv = n_head_kv[il];
    const std::uint64_t k_head = layer.sliding_window ? *head_k_swa : head_k;
    const std::uint64_t v_head = layer.sliding_window ? *head_v_swa : head_v;
    const std::uint64_t k_width = k_head * n_head_kv[il];
    const std::uint64_t v_width = facts.mla ? 0 : v_head * n_head_kv[il];
    if (k_width > std::numeric_limits<std::uint32_t>::max() ||
        v_width > std::numeric_limits<std::uint32_t>::max()) {
      return hp.error("attention.head_count_kv",
                      fmt::format("gives layer {} a KV width beyond uint32; the head counts "
                                  "or head sizes are corrupt",
                                  il));
    }
    layer.k_width = static_cast<std::uint32_t>(k_width);
    layer.v_width = static_cast<std::uint32_t>(v_width);
    layer.main_kv = hybrid ? (!layer.mtp && !layer.recurrent) : true;
    facts.v_width_max = std::max(facts.v_width_max, layer.v_width);
  }

  // Recurrent state: llama_memory_recurrent allocates, per layer with il < n_layer() &&
  // is_recr(il), an f32 row of n_embd_r() and one of n_embd_s() per cell, where
  // (llama_hparams::n_embd_r / n_embd_s for SSM-style layers, gated delta net included)
  //   n_embd_r = (ssm_d_conv - 1) × (ssm_d_inner + 2 × ssm_n_group × ssm_d_state)
  //   n_embd_s = ssm_d_state × ssm_d_inner
  for (const LayerFacts& layer : facts.layers) {
    if (layer.recurrent && !layer.mtp) {
      ++facts.recurrent_layer_count;
    }
  }
  if (hybrid) {
    const std::uint64_t d_conv = ssm.d_conv;
    const std::uint64_t d_inner = ssm.d_inner;
    const std::uint64_t d_state = ssm.d_state;
    const std::uint64_t n_group = ssm.n_group;
    const auto groups =
        checked_mul(2 * n_group, d_state, file, "2 × ssm.group_count × ssm.state_size");
    if (!groups) {
      return groups.error();
    }
    const auto conv_channels = checked_add(d_inner, *groups, file, "the conv state size");
    if (!conv_channels) {
      return conv_channels.error();
    }
    const auto r =
        checked_mul(d_conv > 0 ? d_conv - 1 : 0, *conv_channels, file, "the conv state size");
    if (!r) {
      return r.error();
    }
    const auto s = checked_mul(d_state, d_inner, file, "the delta state size");
    if (!s) {
      return s.error();
    }
    facts.ssm_conv_kernel = static_cast<std::uint32_t>(ssm.d_conv);
    facts.ssm_inner_size = static_cast<std::uint32_t>(ssm.d_inner);
    facts.ssm_state_size = static_cast<std::uint32_t>(ssm.d_state);
    facts.ssm_group_count = static_cast<std::uint32_t>(ssm.n_group);
    facts.ssm_time_step_rank = static_cast<std::uint32_t>(ssm.dt_rank);
    facts.conv_state_width = *r;
    facts.ssm_state_width = *s;
    const auto widths = checked_add(*r, *s, file, "the recurrent state size");
    if (!widths) {
      return widths.error();
    }
    const auto per_layer = checked_mul(*widths, 4, file, "the recurrent state size");
    if (!per_layer) {
      return per_layer.error();
    }
    const auto total =
        checked_mul(*per_layer, facts.recurrent_layer_count, file, "the recurrent state size");
    if (!total) {
      return total.error();
    }
    facts.recurrent_bytes_per_sequence = *total;
  }
  return {};
}

namespace {

// The block index of a "blk.N.…" tensor name, or -1.
std::int64_t block_index(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (name.substr(0, kPrefix.size()) != kPrefix) {
    return -1;
  }
  std::int64_t index = 0;
  std::size_t i = kPrefix.size();
  if (i >= name.size() || name[i] < '0' || name[i] > '9') {
    return -1;
  }
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    index = index * 10 + (name[i] - '0');
    if (index > std::numeric_limits<std::int32_t>::max()) {
      return -1;
    }
  }
  return i < name.size() && name[i] == '.' ? index : -1;
}

// Routed expert tensors: ffn_gate_exps, ffn_up_exps, ffn_down_exps, ffn_gate_up_exps (their
// weights, biases and scales); shared experts are *_shexp and always run.
bool is_routed_expert(std::string_view name) {
  return name.find("_exps.") != std::string_view::npos;
}

}  // namespace

void apply_weight_stats(const std::vector<const gguf::GgufFile*>& files, ModelFacts& facts) {
  std::uint64_t expert_main = 0;
  std::uint64_t expert_read = 0;
  bool has_output = false;
  facts.layer_weight_bytes.assign(facts.block_count, 0);
  facts.tensor_spans.clear();
  for (std::size_t file_index = 0; file_index < files.size(); ++file_index) {
    const gguf::GgufFile* file = files[file_index];
    for (const gguf::TensorInfo& tensor : file->tensors()) {
      {
        const std::int64_t owner = block_index(tensor.name);
        ModelFacts::TensorSpan span;
        span.file = static_cast<std::uint32_t>(file_index);
        span.offset = tensor.offset;
        span.bytes = tensor.bytes;
        span.layer = tensor.name == "token_embd.weight" ? ModelFacts::kTokenEmbedding
                     : owner >= 0 && static_cast<std::uint64_t>(owner) < facts.block_count
                         ? owner
                         : ModelFacts::kOutputLayer;
        facts.tensor_spans.push_back(span);
      }
      ++facts.tensor_count;
      facts.parameter_count += tensor.elements;
      facts.weight_bytes += tensor.bytes;
      if (tensor.name == "token_embd.weight") {
        facts.token_embedding_bytes = tensor.bytes;
        facts.vocab_size = tensor.shape[1];
      } else if (tensor.name == "output.weight") {
        has_output = true;
      }
      const std::int64_t block = block_index(tensor.name);
      if (block >= 0 && static_cast<std::uint64_t>(block) < facts.layer_weight_bytes.size()) {
        facts.layer_weight_bytes[static_cast<std::size_t>(block)] += tensor.bytes;
      } else if (tensor.name != "token_embd.weight") {
        facts.output_weight_bytes += tensor.bytes;
      }
      const bool mtp = block >= 0 && facts.mtp_layer_count > 0 &&
                       static_cast<std::uint64_t>(block) >= facts.main_layer_count;
      const std::string_view name = tensor.name;
      const auto ends_with = [&](std::string_view suffix) {
        return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
      };
      if (block >= 0 && ends_with(".ffn_up.weight")) {
        std::uint64_t& width = mtp ? facts.mtp_ffn_width : facts.ffn_width;
        width = std::max(width, tensor.shape[1]);
      } else if (block >= 0 &&
                 (ends_with(".ffn_up_exps.weight") || ends_with(".ffn_gate_exps.weight"))) {
        facts.expert_ffn_width = std::max(facts.expert_ffn_width, tensor.shape[1]);
      } else if (block >= 0 && ends_with(".ffn_gate_up_exps.weight")) {
        facts.expert_ffn_width = std::max(facts.expert_ffn_width, tensor.shape[1] / 2);
      } else if (block >= 0 && ends_with(".ffn_up_shexp.weight")) {
        facts.shared_ffn_width = std::max(facts.shared_ffn_width, tensor.shape[1]);
      }
      if (mtp) {
        facts.mtp_weight_bytes += tensor.bytes;
        continue;
      }
      if (is_routed_expert(tensor.name)) {
        facts.expert_weight_bytes += tensor.bytes;
        expert_main += tensor.bytes;
        // Experts are stacked whole along the outermost dimension: each one is bytes / count.
        expert_read += facts.expert_count > 0
                           ? tensor.bytes / facts.expert_count * facts.expert_used_count
                           : tensor.bytes;
      }
    }
  }
  facts.tied_output = !has_output;
  if (facts.tied_output) {
    facts.output_weight_bytes += facts.token_embedding_bytes;  // TENSOR_DUPLICATED on its device
  }
  const std::uint64_t embedding_read = facts.tied_output ? 0 : facts.token_embedding_bytes;
  facts.bytes_read_per_token =
      facts.weight_bytes - facts.mtp_weight_bytes - embedding_read - expert_main + expert_read;
}

}  // namespace gb10tune::model::detail
