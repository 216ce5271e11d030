// Weight figures from the tensor infos: which layer owns each tensor, how the graph uses it,
// and what one decode step reads (llama.cpp 2026-08, 3f545be: src/llama-arch.cpp
// LLM_TENSOR_INFOS, src/llama-model-loader.cpp).
#include "weight_stats.hpp"

#include <algorithm>
#include <limits>
#include <string_view>

namespace gb10tune::model::detail {

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

// The input layer's tensors (llama-arch.cpp: LLM_TENSOR_LAYER_INPUT with GGML_OP_GET_ROWS):
// the loader puts them in the CPU's buffers whatever -ngl says.
bool is_input_layer(std::string_view name) {
  for (const std::string_view stem :
       {"token_embd.", "position_embd.", "token_types.", "per_layer_token_embd."}) {
    if (name.starts_with(stem)) {
      return true;
    }
  }
  return false;
}

// Routed expert tensors: ffn_gate_exps, ffn_up_exps, ffn_down_exps, ffn_gate_up_exps (their
// weights, biases and scales); shared experts are *_shexp and always run.
bool is_routed_expert(std::string_view name) {
  return name.find("_exps.") != std::string_view::npos;
}

// ggml_n_dims: the dimensions up to the last one larger than 1 (at least 1).
std::uint32_t used_dims(const gguf::TensorInfo& tensor) {
  std::uint32_t dims = 1;
  for (std::uint32_t i = 1; i < tensor.shape.size(); ++i) {
    if (tensor.shape[i] > 1) {
      dims = i + 1;
    }
  }
  return dims;
}

// How the graph uses `tensor`, from its name (llama-arch.cpp LLM_TENSOR_INFOS): the input
// layer's lookups, biases (GGML_OP_ADD) and the few repeating tensors with another op (row
// lookups such as nextn.embed_tokens, compressor position embeddings, relative-position
// biases, expert-id tables; convolutions; the eagle3/dspark lookup tables) are not matrix
// products; routed experts are mul_mat_id on a 3-D stack; any other 2-D weight is mul_mat.
// A multiplied weight of another shape (MLA's 3-D attn_k_b) counts as other: only those two
// shapes matter to the buffer types that take matrix products (ggml-cpu repack.cpp).
ModelFacts::WeightUse weight_use(const gguf::TensorInfo& tensor) {
  const std::string_view name = tensor.name;
  if (is_input_layer(name) || !name.ends_with(".weight")) {
    return ModelFacts::WeightUse::other;
  }
  for (const std::string_view part :
       {"nextn.embed_tokens", "compressor_ape", "attn_rel_b", "ffn_gate_tid2eid", "ssm_conv1d",
        "shortconv.conv", "conv1d", "posnet.", "convnext.", "d2t", "markov_w1"}) {
    if (name.find(part) != std::string_view::npos) {
      return ModelFacts::WeightUse::other;
    }
  }
  const std::uint32_t dims = used_dims(tensor);
  if (is_routed_expert(name)) {
    return dims == 3 ? ModelFacts::WeightUse::mul_mat_id : ModelFacts::WeightUse::other;
  }
  return dims == 2 ? ModelFacts::WeightUse::mul_mat : ModelFacts::WeightUse::other;
}

}  // namespace

void apply_weight_stats(const std::vector<const gguf::GgufFile*>& files, ModelFacts& facts) {
  std::uint64_t expert_main = 0;
  std::uint64_t expert_read = 0;
  bool has_output = false;
  facts.layer_weight_bytes.assign(facts.block_count, 0);
  facts.tensor_spans.clear();
  const std::uint64_t first_unloaded =
      std::uint64_t{facts.block_count} - std::min(facts.unloaded_block_count, facts.block_count);
  for (std::size_t file_index = 0; file_index < files.size(); ++file_index) {
    const gguf::GgufFile* file = files[file_index];
    for (const gguf::TensorInfo& tensor : file->tensors()) {
      {
        const std::int64_t owner = block_index(tensor.name);
        ModelFacts::TensorSpan span;
        span.file = static_cast<std::uint32_t>(file_index);
        span.offset = tensor.offset;
        span.bytes = tensor.bytes;
        span.name = tensor.name;
        span.type = tensor.type;
        span.rows = tensor.shape[1];
        span.use = weight_use(tensor);
        const bool in_blocks = owner >= 0 && static_cast<std::uint64_t>(owner) < facts.block_count;
        if (is_input_layer(tensor.name)) {
          span.layer = ModelFacts::kInputLayer;
        } else if (!in_blocks) {
          span.layer = ModelFacts::kOutputLayer;
        } else {
          span.layer =
              static_cast<std::uint64_t>(owner) >= first_unloaded ? ModelFacts::kUnloaded : owner;
        }
        facts.tensor_spans.push_back(span);
      }
      ++facts.tensor_count;
      facts.parameter_count += tensor.elements;
      facts.weight_bytes += tensor.bytes;
      if (facts.tensor_spans.back().layer == ModelFacts::kUnloaded) {
        facts.unloaded_weight_bytes += tensor.bytes;
        continue;
      }
      if (tensor.name == "per_layer_token_embd.weight") {
        facts.per_layer_input_width = tensor.shape[0];
      }
      if (tensor.name == "token_embd.weight") {
        facts.token_embedding_bytes = tensor.bytes;
        facts.token_embedding_type = tensor.type;
        facts.vocab_size = tensor.shape[1];
      } else if (tensor.name == "output.weight") {
        has_output = true;
      }
      const std::int64_t block = block_index(tensor.name);
      if (facts.tensor_spans.back().layer == ModelFacts::kInputLayer) {
        facts.input_weight_bytes += tensor.bytes;
      } else if (block >= 0 &&
                 static_cast<std::uint64_t>(block) < facts.layer_weight_bytes.size()) {
        facts.layer_weight_bytes[static_cast<std::size_t>(block)] += tensor.bytes;
      } else {
        facts.output_weight_bytes += tensor.bytes;
      }
      const bool mtp = block >= 0 && facts.mtp_layer_count > 0 &&
                       static_cast<std::uint64_t>(block) >= facts.main_layer_count;
      const std::string_view name = tensor.name;
      const auto ends_with = [&](std::string_view suffix) {
        return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
      };
      LayerFacts* layer = block >= 0 && static_cast<std::uint64_t>(block) < facts.layers.size()
                              ? &facts.layers[static_cast<std::size_t>(block)]
                              : nullptr;
      if (block >= 0 && ends_with(".ffn_up.weight")) {
        std::uint64_t& width = mtp ? facts.mtp_ffn_width : facts.ffn_width;
        width = std::max(width, tensor.shape[1]);
        if (layer != nullptr) {
          layer->ffn_width = tensor.shape[1];
        }
      } else if (block >= 0 &&
                 (ends_with(".ffn_up_exps.weight") || ends_with(".ffn_gate_exps.weight"))) {
        facts.expert_ffn_width = std::max(facts.expert_ffn_width, tensor.shape[1]);
        if (layer != nullptr) {
          layer->experts = true;
        }
      } else if (block >= 0 && ends_with(".ffn_gate_up_exps.weight")) {
        facts.expert_ffn_width = std::max(facts.expert_ffn_width, tensor.shape[1] / 2);
        if (layer != nullptr) {
          layer->experts = true;
        }
      } else if (block >= 0 && ends_with(".exp_probs_b.bias")) {
        facts.expert_selection_bias = true;
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
  // The input layer is a row lookup per token, unless token_embd doubles as the LM head.
  const std::uint64_t lookups =
      facts.input_weight_bytes - (facts.tied_output ? facts.token_embedding_bytes : 0);
  facts.bytes_read_per_token = facts.weight_bytes - facts.unloaded_weight_bytes -
                               facts.mtp_weight_bytes - lookups - expert_main + expert_read;
}

}  // namespace gb10tune::model::detail
