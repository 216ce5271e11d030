// What a model file means for memory and speed, from its GGUF header alone: which layers keep
// a KV cache and how wide it is, sliding-window layers, recurrent state per sequence, the MTP
// head, the native context, weight bytes and bytes read per token. The rules follow llama.cpp
// (2026-08, commit 3f545be): llama_model::load_hparams, the per-architecture
// load_arch_hparams in src/models/, llama_hparams (src/llama-hparams.cpp) and
// llama_model::create_memory. Nothing here reads tensor data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::model {

// One block (layer) of the model, index `index` of `block_count`.
struct LayerFacts {
  std::uint32_t index = 0;
  bool recurrent = false;        // a gated-delta-net / SSM layer: recurrent state, no KV (is_recr)
  bool sliding_window = false;   // an SWA layer: its KV cache holds only the window (is_swa)
  bool mtp = false;              // a nextn/MTP block appended past the main stack
  bool main_kv = false;          // keeps K and V in the main context's cache
  bool kv_shared = false;        // reuses an earlier layer's KV (Gemma 3n/4): holds none
  std::uint32_t head_count = 0;  // n_head(il)
  std::uint32_t head_count_kv = 0;  // n_head_kv(il)
  std::uint32_t k_width = 0;        // n_embd_k_gqa(il): K values per token (heads × key length)
  std::uint32_t v_width = 0;        // n_embd_v_gqa(il): V values per token (heads × value length)
  std::uint64_t ffn_width = 0;      // this block's dense ffn_up rows (n_ff), 0 when it has none
  bool experts = false;             // this block routes to experts (ffn_*_exps tensors)
};

// Which KV layers a figure covers.
enum class KvScope {
  full_attention,  // main context, layers without a sliding window: one cell per context token
  sliding_window,  // main context, SWA layers: cells bounded by the window
  mtp,             // the MTP blocks, cached in the separate draft context of --spec-type draft-mtp
};

// The facts of one model file. When `supported` is false only the architecture-independent
// figures (weights, parameters, experts) are filled and `unsupported_reason` says why.
struct ModelFacts {
  std::string source;        // the file, for messages
  std::string architecture;  // general.architecture
  std::string name;          // general.name (may be empty)
  bool supported = false;
  std::string unsupported_reason;

  std::uint64_t context_length = 0;    // <arch>.context_length: the training (native) context
  std::uint32_t embedding_length = 0;  // <arch>.embedding_length (n_embd)
  std::uint32_t block_count = 0;       // <arch>.block_count (n_layer_all, MTP blocks included)
  std::uint32_t main_layer_count = 0;  // n_layer(): block_count - mtp_layer_count
  std::uint32_t mtp_layer_count = 0;   // <arch>.nextn_predict_layers (0 without an MTP head)
  std::vector<LayerFacts> layers;      // block_count entries
  std::uint32_t sliding_window = 0;    // n_swa: window of the SWA layers, 0 when none
  // n_embd_v_gqa_max(): the V width llama.cpp gives every layer when V is stored transposed
  // (flash attention off) and the widths differ between layers.
  std::uint32_t v_width_max = 0;

  // Multi-head latent attention (deepseek2 with key_length_mla): the cache keeps only K, the
  // compressed latent plus the RoPE part, and no V (v_width is 0 on every layer).
  bool mla = false;
  // With MLA: kv_lora_rank (the latent's width: V's rows in the cache) and key_length_mla
  // (each head's Q width before the latent absorbs its non-RoPE part).
  std::uint32_t mla_latent_width = 0;
  std::uint32_t mla_q_width = 0;

  std::uint32_t recurrent_layer_count = 0;  // main-stack layers with recurrent state
  std::uint64_t conv_state_width = 0;  // n_embd_r(): f32 values of rolling (conv) state per layer
  std::uint64_t ssm_state_width = 0;   // n_embd_s(): f32 values of SSM/delta state per layer
  // Recurrent state of one sequence (one cell) over all recurrent layers:
  // recurrent_layer_count × (conv_state_width + ssm_state_width) × 4 bytes (f32).
  std::uint64_t recurrent_bytes_per_sequence = 0;
  // llm_arch_supports_rs_rollback: the recurrent cache keeps 1 + n_rs_seq snapshots per
  // sequence when speculative decoding asks for rollback (n_rs_seq = --spec-draft-n-max).
  bool recurrent_rollback = false;
  // Gated-delta-net sizes (<arch>.ssm.*), 0 for models without recurrent layers.
  std::uint32_t ssm_conv_kernel = 0;     // d_conv
  std::uint32_t ssm_inner_size = 0;      // d_inner (value heads × value head size)
  std::uint32_t ssm_state_size = 0;      // d_state (key head size)
  std::uint32_t ssm_group_count = 0;     // n_group (key heads)
  std::uint32_t ssm_time_step_rank = 0;  // dt_rank (value heads)

  // Widths of the activations llama.cpp's graph builds, from the tensor shapes: what the
  // compute buffer is made of.
  std::uint64_t vocab_size = 0;        // token_embd.weight rows (n_vocab)
  std::uint64_t ffn_width = 0;         // widest dense ffn_up of the main stack (n_ff), 0 if none
  std::uint64_t expert_ffn_width = 0;  // ffn_up_exps rows per expert (n_ff_exp), 0 if dense
  std::uint64_t shared_ffn_width = 0;  // ffn_up_shexp rows (n_ff_shexp), 0 if none
  std::uint64_t mtp_ffn_width = 0;     // the MTP block's ffn_up rows
  // Per-layer input embeddings (Gemma 3n, Gemma 4: per_layer_token_embd.weight's rows,
  // n_embd_per_layer × n_layer), 0 for models without them.
  std::uint64_t per_layer_input_width = 0;

  std::uint32_t split_count = 1;  // split.count: more than 1 means other files hold tensors
  std::uint64_t tensor_count = 0;
  std::uint64_t parameter_count = 0;        // elements of every tensor in this file
  std::uint64_t weight_bytes = 0;           // data bytes of every tensor (not the file size)
  std::uint64_t token_embedding_bytes = 0;  // token_embd.weight
  gguf::GgmlType token_embedding_type = gguf::GgmlType::f32;
  // The input layer's tensors (token_embd, position_embd, token_types, per_layer_token_embd:
  // LLM_TENSOR_LAYER_INPUT): row lookups that llama.cpp keeps in host memory.
  std::uint64_t input_weight_bytes = 0;
  bool tied_output = false;            // no output.weight: the token embedding is the LM head
  std::uint64_t mtp_weight_bytes = 0;  // tensors of the MTP blocks (loaded only with MTP on)
  // The last blocks whose tensors llama.cpp never loads (nextn blocks it skips, such as
  // glm4moe's), and those tensors' bytes: in weight_bytes, in no buffer, never read.
  std::uint32_t unloaded_block_count = 0;
  std::uint64_t unloaded_weight_bytes = 0;
  // Data bytes of each block's tensors ("blk.N.…"), block_count entries: what llama.cpp puts
  // on the device that block N is assigned to.
  std::vector<std::uint64_t> layer_weight_bytes;
  // The output layer's tensors (output.weight, output_norm.*, any other tensor outside the
  // blocks except token_embd): they go to the device of the output layer. With a tied output
  // llama.cpp loads a duplicate of token_embd there, counted here too.
  std::uint64_t output_weight_bytes = 0;
  // How llama.cpp's graph uses a tensor (the op of its LLM_TENSOR_INFOS entry, as the loader
  // tests it against each buffer type: llama-model-loader.cpp weight_buft_supported).
  enum class WeightUse {
    other,       // row lookups (token_embd), norms, biases, convolutions, other shapes
    mul_mat,     // a 2-D weight multiplied by the activations
    mul_mat_id,  // a 3-D stack of routed experts (*_exps), multiplied per selected expert
  };
  // Where each tensor's data lies and which layer owns it: llama.cpp keeps the file range from
  // the first to the last tensor the CPU uses mapped, so offloaded tensors inside that range
  // stay resident in host memory too (llama_model_loader, unmap_fragment).
  struct TensorSpan {
    std::uint32_t file = 0;    // index of the file (shard) in the order read
    std::uint64_t offset = 0;  // data offset relative to the file's data section
    std::uint64_t bytes = 0;
    std::string name;  // the tensor's name ("blk.3.ffn_up.weight")
    // block index; kInputLayer; kOutputLayer (anything else); kUnloaded
    std::int64_t layer = 0;
    gguf::GgmlType type = gguf::GgmlType::f32;
    std::uint64_t rows = 1;  // ne[1]: what CPU repacking interleaves (plan/cpu_repack.hpp)
    WeightUse use = WeightUse::other;
  };
  static constexpr std::int64_t kInputLayer = -1;
  static constexpr std::int64_t kOutputLayer = -2;
  static constexpr std::int64_t kUnloaded = -3;  // a tensor of an unloaded block
  std::vector<TensorSpan> tensor_spans;
  std::uint32_t expert_count = 0;       // <arch>.expert_count (0 for dense models)
  std::uint32_t expert_used_count = 0;  // <arch>.expert_used_count
  // How the router's weights are formed (build_moe_ffn): normalised to sum 1 (qwen3moe always;
  // otherwise <arch>.expert_weights_norm), and whether a selection bias (exp_probs_b) is added.
  bool expert_weights_norm = false;
  bool expert_selection_bias = false;
  std::uint64_t expert_weight_bytes = 0;  // routed expert tensors (*_exps) of the main stack
  // Weight bytes one decode step reads for the main stack: everything except the MTP blocks,
  // the token embedding (a row lookup, unless it doubles as the LM head) and the routed
  // experts that are not used (dense models: all experts count; MoE: used/total of them).
  std::uint64_t bytes_read_per_token = 0;

  bool has_mtp() const { return mtp_layer_count > 0; }
  bool is_moe() const { return expert_count > 0; }
  bool is_hybrid() const { return recurrent_layer_count > 0; }

  // How many layers `scope` covers.
  std::uint32_t kv_layer_count(KvScope scope) const;
  // Bytes of K plus V for one cache cell (one token of one stream) over the layers of
  // `scope`, with cache types `k` and `v` (ggml_row_size per layer, like llama_kv_cache).
  // `v_transposed` (flash attention off) gives every layer's V the width v_width_max, as
  // llama_kv_cache does. An Error when a layer's width is not a whole number of blocks of
  // the type (llama.cpp cannot use that cache type for this model).
  Expected<std::uint64_t> kv_bytes_per_cell(KvScope scope, gguf::GgmlType k, gguf::GgmlType v,
                                            bool v_transposed = false) const;
};

// The facts of the model in `file`. An unknown architecture (or an mmproj file) is not an
// Error: the result has supported = false and the reason. Missing or malformed keys that
// llama.cpp requires for a supported architecture are an Error naming the file and the key.
// For the first shard of a split model (split_count > 1) the weight figures cover that file
// only: use describe_split_model or read_model for the whole model.
Expected<ModelFacts> describe_model(const gguf::GgufFile& file);

// The facts of a split model: `first` (split.no 0) holds the metadata, `others` the remaining
// shards in order (split.no 1, 2, …); the weight figures cover every shard. An Error names the
// shard whose split.no or split.count disagrees, or says how many shards are missing.
Expected<ModelFacts> describe_split_model(const gguf::GgufFile& first,
                                          const std::vector<gguf::GgufFile>& others);

// The file names of a split model's shards, as llama.cpp derives them from the first one
// ("<prefix>-00001-of-0000N.gguf" → "<prefix>-0000K-of-0000N.gguf", K = 1…N); an Error when
// `first` is not named that way for `count` shards.
Expected<std::vector<std::filesystem::path>> split_shard_paths(const std::filesystem::path& first,
                                                               std::uint32_t count);

// Reads the header of the model at `path` and, for a split model (split.count > 1), the headers
// of every other shard beside it, and describes the whole model. An Error names the file: one
// that cannot be read, a shard given instead of the first, a missing shard. With `header_only`
// each file may be a header-only copy (gguf::read_gguf).
Expected<ModelFacts> read_model(const std::filesystem::path& path,
                                gguf::Completeness completeness = gguf::Completeness::whole_file);

// A multimodal projector (mmproj) file: what it adds to memory.
struct ProjectorFacts {
  std::string source;
  std::string projector_type;  // clip.projector_type (may be empty)
  bool has_vision = false;     // clip.has_vision_encoder
  bool has_audio = false;      // clip.has_audio_encoder
  std::uint64_t parameter_count = 0;
  std::uint64_t weight_bytes = 0;  // data bytes of every tensor
  // The vision tower (clip.vision.*; 0 when absent), what its compute buffer depends on.
  std::uint32_t image_size = 0;           // image_size: the warm-up image's side
  std::uint32_t image_max_pixels = 0;     // image_max_pixels (dynamic-resolution projectors)
  std::uint32_t patch_size = 0;           // patch_size
  std::uint32_t embedding_length = 0;     // embedding_length (n_embd of the tower)
  std::uint32_t feed_forward_length = 0;  // feed_forward_length
  std::uint32_t block_count = 0;          // block_count
  std::uint32_t head_count = 0;           // attention.head_count
  std::uint32_t projection_dim = 0;       // projection_dim (the text model's n_embd)
  // The patch embedding's type (v.patch_embd.weight): bf16 makes ggml's im2col f32, else f16.
  gguf::GgmlType patch_embd_type = gguf::GgmlType::f16;
};

// The facts of an mmproj file; an Error when `file` is not a "clip" architecture file.
Expected<ProjectorFacts> describe_projector(const gguf::GgufFile& file);

}  // namespace gb10tune::model
