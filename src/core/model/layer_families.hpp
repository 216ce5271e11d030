// The rule of each architecture family (architecture_table.hpp's Family): what its
// load_arch_hparams reads and which layers llama_model::create_memory gives a cache (private to
// the model module; llama.cpp 2026-08, 3f545be).
#pragma once

#include <cstdint>
#include <vector>

#include "architecture_table.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/util/expected.hpp"
#include "layer_hparams.hpp"

namespace gb10tune::model::detail {

// What every architecture's attention reads (llama_model::load_hparams), per block; the MTP
// blocks are included, as they are read before nextn_predict_layers is known.
struct AttentionShape {
  std::vector<std::uint32_t> n_head;     // attention.head_count
  std::vector<std::uint32_t> n_head_kv;  // attention.head_count_kv, else head_count
  std::uint32_t head_k = 0;              // attention.key_length, else n_embd / n_head(0)
  std::uint32_t head_v = 0;              // attention.value_length, else n_embd / n_head(0)
  std::uint32_t head_k_swa = 0;          // attention.key_length_swa (SWA layers), else head_k
  std::uint32_t head_v_swa = 0;          // attention.value_length_swa (SWA layers), else head_v
};

// A family rule's input: the architecture's keys, its row of the table, its attention.
struct FamilyInput {
  const Hparams& hp;
  const ArchRule& rule;
  AttentionShape attention;
};

// The family rules. Each is called with the common figures of `facts` set (block_count,
// main_layer_count, expert counts, `layers` indexed and keeping their own KV); it reads its
// family's keys, marks each layer's sliding window, recurrent state and where its KV lives,
// and ends with finish_layers. An Error names the file and the key. nemotron_h sets
// facts.unsupported_reason (and clears the layers) for a variant the rules do not cover.
Status apply_dense(const FamilyInput& in, ModelFacts& facts);
Status apply_swa(const FamilyInput& in, ModelFacts& facts);
Status apply_llama4(const FamilyInput& in, ModelFacts& facts);
Status apply_mla(const FamilyInput& in, ModelFacts& facts);
Status apply_gemma3n(const FamilyInput& in, ModelFacts& facts);
Status apply_gemma4(const FamilyInput& in, ModelFacts& facts);
Status apply_qwen_hybrid(const FamilyInput& in, ModelFacts& facts);
Status apply_nemotron_h(const FamilyInput& in, ModelFacts& facts);
Status apply_granite_hybrid(const FamilyInput& in, ModelFacts& facts);

// What every family ends with, once its layers are marked: each layer's MTP flag, head
// counts and KV widths (llama_hparams::n_embd_k_gqa / n_embd_v_gqa, src/llama-hparams.cpp:
// the head size × n_head_kv(il), the SWA head size on SWA layers, no V with MLA),
// v_width_max and recurrent_layer_count. An Error when a width exceeds uint32.
Status finish_layers(const FamilyInput& in, ModelFacts& facts);

}  // namespace gb10tune::model::detail
