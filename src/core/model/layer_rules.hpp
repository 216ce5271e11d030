// The per-architecture rules of llama.cpp that decide layer kinds, KV widths, sliding windows,
// recurrent state and MTP blocks (private to the model module).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::model::detail {

// The most layers llama.cpp loads (LLAMA_MAX_LAYERS, src/llama-hparams.h).
inline constexpr std::uint32_t kMaxLayers = 512;

// The architectures apply_layer_rules knows, comma-separated, for messages.
std::string_view supported_architectures();

// The supported architecture whose name is closest to `architecture` (longest common
// prefix, then edit distance), for the message that refuses an unknown one.
std::string_view nearest_supported_architecture(std::string_view architecture);

// True when apply_layer_rules knows `architecture`.
bool is_supported_architecture(std::string_view architecture);

// Why launch does not plan `architecture`, an architecture llama.cpp (3f545be) implements
// but gb10tune has no layer rules for; empty when llama.cpp does not know it either.
std::string_view refusal_reason(std::string_view architecture);

// Fills context_length, embedding_length, block_count, main/MTP layer counts, layers,
// sliding_window, v_width_max, the recurrent figures and the expert counts of `facts` for a
// supported architecture (facts.architecture). An Error names the file and the key. A
// variant of the architecture the rules do not cover sets facts.unsupported_reason instead.
Status apply_layer_rules(const gguf::GgufFile& file, ModelFacts& facts);

// Fills the weight figures of `facts` from the tensor infos of every file of the model (the
// shards of a split model, first one first); uses main_layer_count (0: no MTP blocks) and the
// expert counts already set.
void apply_weight_stats(const std::vector<const gguf::GgufFile*>& files, ModelFacts& facts);

}  // namespace gb10tune::model::detail
