// The weight figures of a model from its tensor infos (private to the model module).
#pragma once

#include <vector>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"

namespace gb10tune::model::detail {

// Fills the weight figures of `facts` from the tensor infos of every file of the model (the
// shards of a split model, first one first); uses main_layer_count (0: no MTP blocks) and the
// expert counts already set.
void apply_weight_stats(const std::vector<const gguf::GgufFile*>& files, ModelFacts& facts);

}  // namespace gb10tune::model::detail
