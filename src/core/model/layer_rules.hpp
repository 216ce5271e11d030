// The per-architecture rules of llama.cpp that decide layer kinds, KV widths, sliding windows,
// recurrent state and MTP blocks (private to the model module).
#pragma once

#include <cstdint>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::model::detail {

// The most layers llama.cpp loads (LLAMA_MAX_LAYERS, src/llama-hparams.h).
inline constexpr std::uint32_t kMaxLayers = 512;

// Fills context_length, embedding_length, block_count, main/MTP layer counts, layers,
// sliding_window, v_width_max, the recurrent figures and the expert counts of `facts` for a
// supported architecture (facts.architecture; see architecture_table.hpp): the keys every
// architecture reads, then its family's rule (layer_families.hpp). An Error names the file
// and the key. A variant of the architecture the rules do not cover sets
// facts.unsupported_reason instead.
Status apply_layer_rules(const gguf::GgufFile& file, ModelFacts& facts);

}  // namespace gb10tune::model::detail
