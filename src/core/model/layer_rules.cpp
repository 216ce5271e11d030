// The layer rules: the keys every architecture reads, then its family's rule
// (layer_families.hpp), from the llama.cpp functions named beside them (llama.cpp 2026-08,
// 3f545be).
#include "layer_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "architecture_table.hpp"
#include "layer_families.hpp"
#include "layer_hparams.hpp"

namespace gb10tune::model::detail {

namespace {

// Architectures whose nextn blocks llama.cpp 3f545be creates with TENSOR_SKIP, so that the
// loader drops their tensors ("model has unused tensor … -- ignoring") while the blocks keep
// a KV cache like any other (create_memory has no filter for them): glm4moe, glm4 and
// bailingmoe2 always (src/models/glm4-moe.cpp, glm4.cpp, bailingmoe2.cpp: flags for
// i >= n_layer()); deepseek2 and mistral4 unless the server loads MTP for draft-mtp
// (src/models/deepseek2.cpp: mtp_flags), which launch does not plan for them.
constexpr std::array<std::string_view, 5> kUnloadedNextnArchitectures{
    "glm4moe", "glm4", "bailingmoe2", "deepseek2", "mistral4"};

// llama_model::load_hparams (src/llama-model.cpp): the sizes every architecture reads.
Status read_model_size(const Hparams& hp, ModelFacts& facts) {
  const auto n_ctx_train = hp.u32("context_length");
  const auto n_embd = hp.u32("embedding_length");
  const auto n_layer_all = hp.u32("block_count");
  if (const auto failed = first_error(n_ctx_train, n_embd, n_layer_all)) {
    return *failed;
  }
  if (*n_layer_all == 0 || *n_layer_all > kMaxLayers) {
    return hp.error("block_count", fmt::format("is {}; llama.cpp accepts 1 to {} layers",
                                               *n_layer_all, kMaxLayers));
  }
  facts.context_length = *n_ctx_train;
  facts.embedding_length = *n_embd;
  facts.block_count = *n_layer_all;
  facts.main_layer_count = *n_layer_all;

  const auto n_expert = hp.u32_or("expert_count", 0);
  const auto n_expert_used = hp.u32_or("expert_used_count", 0);
  if (const auto failed = first_error(n_expert, n_expert_used)) {
    return *failed;
  }
  if (*n_expert_used > *n_expert || (*n_expert > 0 && *n_expert_used == 0)) {
    return hp.error("expert_used_count",
                    fmt::format("is {} with expert_count {}; llama.cpp requires 0 < used <= "
                                "count for MoE models and 0 for dense ones",
                                *n_expert_used, *n_expert));
  }
  facts.expert_count = *n_expert;
  facts.expert_used_count = *n_expert_used;

  if (std::find(kUnloadedNextnArchitectures.begin(), kUnloadedNextnArchitectures.end(),
                facts.architecture) != kUnloadedNextnArchitectures.end()) {
    const auto nextn = read_nextn_count(hp, facts.block_count);
    if (!nextn) {
      return nextn.error();
    }
    facts.unloaded_block_count = *nextn;
  }
  return {};
}

// Per-layer head counts and head sizes: n_embd / n_head(0) unless key_length / value_length
// say otherwise; SWA layers may override them with key_length_swa / value_length_swa.
Expected<AttentionShape> read_attention_shape(const Hparams& hp, const ModelFacts& facts) {
  AttentionShape shape;
  auto n_head = hp.per_layer_or("attention.head_count", facts.block_count,
                                std::vector<std::uint32_t>(facts.block_count, 0));
  if (!n_head) {
    return n_head.error();
  }
  shape.n_head = std::move(*n_head);
  auto n_head_kv = hp.per_layer_or("attention.head_count_kv", facts.block_count, shape.n_head);
  if (!n_head_kv) {
    return n_head_kv.error();
  }
  shape.n_head_kv = std::move(*n_head_kv);

  if (shape.n_head[0] > 0) {
    const std::uint32_t fallback = facts.embedding_length / shape.n_head[0];
    const auto k = hp.u32_or("attention.key_length", fallback);
    const auto v = hp.u32_or("attention.value_length", fallback);
    if (const auto failed = first_error(k, v)) {
      return *failed;
    }
    shape.head_k = *k;
    shape.head_v = *v;
  }
  const auto k_swa = hp.u32_or("attention.key_length_swa", shape.head_k);
  const auto v_swa = hp.u32_or("attention.value_length_swa", shape.head_v);
  if (const auto failed = first_error(k_swa, v_swa)) {
    return *failed;
  }
  shape.head_k_swa = *k_swa;
  shape.head_v_swa = *v_swa;
  return shape;
}

// The family's rule.
Status apply_family(const FamilyInput& in, ModelFacts& facts) {
  switch (in.rule.family) {
    case Family::dense:
      return apply_dense(in, facts);
    case Family::swa:
      return apply_swa(in, facts);
    case Family::llama4:
      return apply_llama4(in, facts);
    case Family::mla:
      return apply_mla(in, facts);
    case Family::gemma3n:
      return apply_gemma3n(in, facts);
    case Family::gemma4:
      return apply_gemma4(in, facts);
    case Family::qwen_hybrid:
      return apply_qwen_hybrid(in, facts);
    case Family::nemotron_h:
      return apply_nemotron_h(in, facts);
    case Family::granite_hybrid:
      return apply_granite_hybrid(in, facts);
  }
  return Error{fmt::format("architecture '{}' has a family without a rule", in.rule.name)};
}

}  // namespace

Status apply_layer_rules(const gguf::GgufFile& file, ModelFacts& facts) {
  const ArchRule* rule = find_rule(facts.architecture);
  if (rule == nullptr) {
    return Error{
        fmt::format("{}: architecture '{}' has no layer rules", file.source(), facts.architecture)};
  }
  const Hparams hp(file, facts.architecture);
  if (Status size = read_model_size(hp, facts); !size) {
    return size;
  }
  auto attention = read_attention_shape(hp, facts);
  if (!attention) {
    return attention.error();
  }
  // Until a family's rule says otherwise, every block keeps its own KV
  // (llama_hparams::has_kv with n_layer_kv_from_start unset).
  facts.layers.assign(facts.block_count, LayerFacts{});
  for (std::uint32_t il = 0; il < facts.block_count; ++il) {
    facts.layers[il].index = il;
    facts.layers[il].main_kv = true;
  }
  return apply_family(FamilyInput{hp, *rule, std::move(*attention)}, facts);
}

Status finish_layers(const FamilyInput& in, ModelFacts& facts) {
  const AttentionShape& shape = in.attention;
  for (LayerFacts& layer : facts.layers) {
    const std::uint32_t il = layer.index;
    layer.mtp = il >= facts.main_layer_count;
    layer.head_count = shape.n_head[il];
    layer.head_count_kv = shape.n_head_kv[il];
    const std::uint64_t k_head = layer.sliding_window ? shape.head_k_swa : shape.head_k;
    const std::uint64_t v_head = layer.sliding_window ? shape.head_v_swa : shape.head_v;
    const std::uint64_t k_width = k_head * layer.head_count_kv;
    const std::uint64_t v_width = facts.mla ? 0 : v_head * layer.head_count_kv;
    if (k_width > std::numeric_limits<std::uint32_t>::max() ||
        v_width > std::numeric_limits<std::uint32_t>::max()) {
      return in.hp.error("attention.head_count_kv",
                         fmt::format("gives layer {} a KV width beyond uint32; the head counts "
                                     "or head sizes are corrupt",
                                     il));
    }
    layer.k_width = static_cast<std::uint32_t>(k_width);
    layer.v_width = static_cast<std::uint32_t>(v_width);
    facts.v_width_max = std::max(facts.v_width_max, layer.v_width);
    if (layer.recurrent && !layer.mtp) {
      ++facts.recurrent_layer_count;
    }
  }
  return {};
}

}  // namespace gb10tune::model::detail
