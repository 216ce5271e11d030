#include "gb10tune/model/model_facts.hpp"

#include <fmt/format.h>

#include <limits>
#include <system_error>
#include <utility>

#include "architecture_table.hpp"
#include "layer_rules.hpp"
#include "weight_stats.hpp"

namespace gb10tune::model {

namespace {

bool in_scope(const LayerFacts& layer, KvScope scope) {
  switch (scope) {
    case KvScope::full_attention:
      return layer.main_kv && !layer.sliding_window;
    case KvScope::sliding_window:
      return layer.main_kv && layer.sliding_window;
    case KvScope::mtp:
      return layer.mtp;
  }
  return false;
}

// The architecture-independent figures llama.cpp's loader reads for any model, best effort:
// a missing or odd key leaves its field at 0 (a block_count llama.cpp would not load, too).
void fill_generic(const gguf::GgufFile& file, ModelFacts& facts) {
  const std::string& arch = facts.architecture;
  auto u32 = [&](std::string_view suffix) -> std::uint32_t {
    const auto value = file.get_uint(fmt::format("{}.{}", arch, suffix));
    return value && *value <= 0xffffffffu ? static_cast<std::uint32_t>(*value) : 0;
  };
  facts.context_length = u32("context_length");
  facts.embedding_length = u32("embedding_length");
  const std::uint32_t blocks = u32("block_count");
  facts.block_count = blocks <= detail::kMaxLayers ? blocks : 0;
  facts.main_layer_count = facts.block_count;
  facts.expert_count = u32("expert_count");
  facts.expert_used_count = u32("expert_used_count");
  if (facts.expert_used_count > facts.expert_count) {
    facts.expert_used_count = facts.expert_count;
  }
  // build_moe_ffn's norm_w: qwen3moe's graph passes true, glm4moe (and others) the key.
  facts.expert_weights_norm =
      arch == "qwen3moe" || arch == "qwen3vlmoe" ||
      file.get_bool(fmt::format("{}.expert_weights_norm", arch)).value_or(false);
}

}  // namespace

std::uint32_t ModelFacts::kv_layer_count(KvScope scope) const {
  std::uint32_t count = 0;
  for (const LayerFacts& layer : layers) {
    count += in_scope(layer, scope) ? 1 : 0;
  }
  return count;
}

Expected<std::uint64_t> ModelFacts::kv_bytes_per_cell(KvScope scope, gguf::GgmlType k,
                                                      gguf::GgmlType v, bool v_transposed) const {
  std::uint64_t total = 0;
  for (const LayerFacts& layer : layers) {
    if (!in_scope(layer, scope)) {
      continue;
    }
    const std::uint32_t v_width = v_transposed ? v_width_max : layer.v_width;
    const auto k_bytes = gguf::ggml_bytes(k, layer.k_width);
    const auto v_bytes = gguf::ggml_bytes(v, v_width);
    if (!k_bytes || !v_bytes) {
      const gguf::GgmlTypeInfo& bad = gguf::ggml_type_info(!k_bytes ? k : v);
      return Error{
          fmt::format("{}: layer {} has a {} width of {}, not a multiple of the {} "
                      "block size {}; choose another {} cache type for this model",
                      source, layer.index, !k_bytes ? "K" : "V", !k_bytes ? layer.k_width : v_width,
                      bad.name, bad.block_size, !k_bytes ? "K" : "V")};
    }
    total += *k_bytes + *v_bytes;  // widths are uint32 and layers <= 512: no overflow
  }
  return total;
}

Expected<ModelFacts> describe_model(const gguf::GgufFile& file) {
  return describe_split_model(file, {});
}

Expected<ModelFacts> describe_split_model(const gguf::GgufFile& first,
                                          const std::vector<gguf::GgufFile>& others) {
  const gguf::GgufFile& file = first;
  ModelFacts facts;
  facts.source = file.source();
  const auto arch = file.get_string("general.architecture");
  if (!arch) {
    return Error{
        fmt::format("{}: no general.architecture key, so this is not a llama.cpp model "
                    "file; check the path",
                    file.source())};
  }
  facts.architecture = *arch;
  facts.name = file.get_string_or("general.name", "").value_or("");
  const auto splits = file.get_uint_or("split.count", 1);
  facts.split_count =
      splits && *splits > 0 && *splits <= 0xffffffffu ? static_cast<std::uint32_t>(*splits) : 1;

  if (facts.architecture == "clip") {
    facts.unsupported_reason =
        "this is a multimodal projector (mmproj) file, not a model; pass it with --mmproj";
  } else if (!detail::is_supported_architecture(facts.architecture)) {
    const std::string_view why = detail::refusal_reason(facts.architecture);
    // A corrupt header may hold a name of any length: messages show its first 64 characters.
    constexpr std::size_t kShown = 64;
    const std::string shown = facts.architecture.size() <= kShown
                                  ? facts.architecture
                                  : facts.architecture.substr(0, kShown) +
                                        fmt::format("… ({} characters)", facts.architecture.size());
    facts.unsupported_reason =
        why.empty() ? fmt::format(
                          "architecture '{}' is not one gb10tune knows, nor one llama.cpp "
                          "3f545be implements (nearest supported: {}; the supported ones are "
                          "listed in docs/memory-plan.md); its KV cache and state sizes would "
                          "be guesses, so it is not planned as any of them",
                          shown, detail::nearest_supported_architecture(facts.architecture))
                    : fmt::format(
                          "architecture '{}' is not supported: {} (nearest supported: {}; the "
                          "supported ones are listed in docs/memory-plan.md)",
                          shown, why, detail::nearest_supported_architecture(facts.architecture));
  } else {
    if (Status rules = detail::apply_layer_rules(file, facts); !rules) {
      return rules.error();
    }
    // The rules may find a variant they do not cover (and say why).
    facts.supported = facts.unsupported_reason.empty();
  }
  if (!facts.supported) {
    fill_generic(file, facts);
  }
  std::vector<const gguf::GgufFile*> files{&file};
  if (!others.empty()) {
    if (others.size() + 1 != facts.split_count) {
      return Error{fmt::format("{}: split.count is {} but {} shard{} were given", file.source(),
                               facts.split_count, others.size() + 1,
                               others.size() + 1 == 1 ? "" : "s")};
    }
    for (std::size_t i = 0; i < others.size(); ++i) {
      const gguf::GgufFile& shard = others[i];
      const auto no = shard.get_uint_or("split.no", 0);
      const auto count = shard.get_uint_or("split.count", 1);
      if (!no || !count || *no != i + 1 || *count != facts.split_count) {
        return Error{fmt::format(
            "{}: expected split.no {} and split.count {} (shard {} of {}), but its header says "
            "split.no {}, split.count {}; the shards belong to different models",
            shard.source(), i + 1, facts.split_count, i + 2, file.source(),
            no ? fmt::format("{}", *no) : std::string("?"),
            count ? fmt::format("{}", *count) : std::string("?"))};
      }
      files.push_back(&shard);
    }
  }
  detail::apply_weight_stats(files, facts);
  return facts;
}

Expected<std::vector<std::filesystem::path>> split_shard_paths(const std::filesystem::path& first,
                                                               std::uint32_t count) {
  const std::string name = first.filename().string();
  const std::string suffix = fmt::format("-{:05}-of-{:05}.gguf", 1, count);
  if (name.size() <= suffix.size() || !name.ends_with(suffix)) {
    return Error{
        fmt::format("{}: the header says it is the first of {} shards, but it is not "
                    "named <name>{} as llama.cpp requires to find the others; restore "
                    "the shards' original names",
                    first.string(), count, suffix)};
  }
  const std::string prefix = name.substr(0, name.size() - suffix.size());
  std::vector<std::filesystem::path> paths;
  for (std::uint32_t i = 1; i <= count; ++i) {
    paths.push_back(first.parent_path() / fmt::format("{}-{:05}-of-{:05}.gguf", prefix, i, count));
  }
  return paths;
}

Expected<ModelFacts> read_model(const std::filesystem::path& path,
                                gguf::Completeness completeness) {
  auto first = gguf::read_gguf(path, completeness);
  if (!first) {
    return first.error();
  }
  const auto count = first->get_uint_or("split.count", 1);
  const auto no = first->get_uint_or("split.no", 0);
  if (!count || !no) {
    return Error{
        fmt::format("{}: {}", path.string(), !count ? count.error().message : no.error().message)};
  }
  if (*count <= 1) {
    return describe_model(*first);
  }
  if (*count > 0xffffu) {
    return Error{fmt::format("{}: split.count {} is not a shard count", path.string(), *count)};
  }
  if (*no != 0) {
    return Error{fmt::format("{} is shard {} of {} of a split model; give the first shard",
                             path.string(), *no + 1, *count)};
  }
  const auto paths = split_shard_paths(path, static_cast<std::uint32_t>(*count));
  if (!paths) {
    return paths.error();
  }
  std::vector<gguf::GgufFile> others;
  for (std::size_t i = 1; i < paths->size(); ++i) {
    const std::filesystem::path& shard = (*paths)[i];
    std::error_code ec;
    if (!std::filesystem::exists(shard, ec)) {
      return Error{fmt::format("split model {}: shard {} of {} is missing ({}); download it",
                               path.string(), i + 1, *count, shard.string())};
    }
    auto file = gguf::read_gguf(shard, completeness);
    if (!file) {
      return Error{fmt::format("split model {}: shard {} of {}: {}", path.string(), i + 1, *count,
                               file.error().message)};
    }
    others.push_back(std::move(*file));
  }
  return describe_split_model(*first, others);
}

Expected<ProjectorFacts> describe_projector(const gguf::GgufFile& file) {
  const auto arch = file.get_string_or("general.architecture", "");
  if (!arch) {
    return arch.error();
  }
  if (*arch != "clip") {
    return Error{
        fmt::format("{}: architecture '{}' is not a multimodal projector (mmproj files "
                    "have architecture 'clip'); check which file is the model and "
                    "which the projector",
                    file.source(), arch->empty() ? "(none)" : *arch)};
  }
  ProjectorFacts facts;
  facts.source = file.source();
  facts.projector_type = file.get_string_or("clip.projector_type", "").value_or("");
  facts.has_vision = file.has("clip.has_vision_encoder") &&
                     file.get_bool("clip.has_vision_encoder").value_or(false);
  facts.has_audio =
      file.has("clip.has_audio_encoder") && file.get_bool("clip.has_audio_encoder").value_or(false);
  facts.parameter_count = file.tensor_elements();
  facts.weight_bytes = file.tensor_bytes();
  const auto vision = [&](std::string_view key) -> Expected<std::uint32_t> {
    const std::string name = "clip.vision." + std::string(key);
    const auto value = file.get_uint_or(name, 0);
    if (!value) {
      return value.error();
    }
    if (*value > std::numeric_limits<std::uint32_t>::max()) {
      return Error{fmt::format("{}: {} = {} is out of range", file.source(), name, *value)};
    }
    return static_cast<std::uint32_t>(*value);
  };
  for (auto [key, field] : {std::pair{"image_size", &facts.image_size},
                            std::pair{"image_max_pixels", &facts.image_max_pixels},
                            std::pair{"patch_size", &facts.patch_size},
                            std::pair{"embedding_length", &facts.embedding_length},
                            std::pair{"feed_forward_length", &facts.feed_forward_length},
                            std::pair{"block_count", &facts.block_count},
                            std::pair{"attention.head_count", &facts.head_count},
                            std::pair{"projection_dim", &facts.projection_dim}}) {
    const auto value = vision(key);
    if (!value) {
      return value.error();
    }
    *field = *value;
  }
  if (const auto* patch = file.find_tensor("v.patch_embd.weight")) {
    facts.patch_embd_type = patch->type;
  }
  return facts;
}

}  // namespace gb10tune::model
