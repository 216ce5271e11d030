// Test models written with the GGUF writer, shared by the model-facts, plan and CLI tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {

// Parses the writer's bytes in memory and describes the model.
Expected<model::ModelFacts> describe(const GgufWriter& w, const std::string& name = "model.gguf");

// A llama header without tensors: `blocks` layers, a training context of `context` tokens,
// width `embd`, `heads` attention heads of which `kv_heads` are KV heads (of embd / heads values).
GgufWriter llama_header(std::uint32_t blocks, std::uint32_t context, std::uint32_t embd,
                        std::uint32_t heads, std::uint32_t kv_heads);

// The report's model (K13): Qwen3.x 27B, qwen35, 64 main layers plus `nextn` MTP blocks
// (block_count = 64 + nextn), full attention every 4th layer, 4 KV heads of 256 dims, gated
// delta net state (conv kernel 4, inner 6144, state 128, 16 groups). No tensors.
GgufWriter report_model(std::uint32_t blocks = 65, std::uint32_t nextn = 1);

// The report's tuned configuration (K9): -c 589824 -np 3 -kvu, draft-mtp n-max 4, f16 caches,
// --cache-ram 24576; llama.cpp's defaults otherwise.
plan::PlanConfig report_tuned_config();

// The tiny-qwen35 model the captured llama-server answers came from (header and tensor
// shapes as fixtures/gguf/write_tiny_qwen35.py writes them; the data is zeros): 8 main
// layers (attention at 3 and 7, gated delta net elsewhere), n_embd 64, 4 heads of 32 dims,
// 2 KV heads, a 101-token vocabulary (the space piece and the byte tokens of tab, newline and
// printable ASCII), all f32, plus one MTP block when `mtp`.
GgufWriter tiny_qwen35_model(bool mtp = true, std::uint32_t context_length = 32768);

// Adds the tensor infos of a 27B-class model (token embedding plus 64 blocks of K-quant FFN
// and attention weights): about 18 GB of data, written as a sparse hole.
void add_large_model_tensors(GgufWriter& w);

// The report's model at full size, as the benchmarks read it: report_model() with a
// tokenizer-sized metadata section (150k tokens) and add_large_model_tensors().
GgufWriter large_report_model();
// large_report_model() without its tensors: the metadata and the 150k-token vocabulary.
GgufWriter large_report_model_metadata();

// Adds a tokenizer the size of the largest real ones: `tokens` tokens (tokenizer.ggml.tokens,
// .scores, .token_type) and `merges` BPE merges (tokenizer.ggml.merges). Strings of the
// lengths real vocabularies have: most short, every eighth 24 bytes or more (past the
// small-string buffer, so held on the heap).
void add_large_vocabulary(GgufWriter& w, std::uint32_t tokens, std::uint32_t merges);

// Writes `path`: one key, `key`, an array of `count` empty arrays whose bytes are the zeros of
// a sparse hole (12 zero bytes read as an empty uint8 array), the hostile header of 12 bytes of
// file per array. Returns the file size.
std::uint64_t write_empty_nested_arrays(const std::filesystem::path& path, const std::string& key,
                                        std::uint64_t count);

// A small llama whose matrices have type `type`: `blocks` blocks of width 256 (attn_q and
// attn_output 256 x 256, attn_k and attn_v 256 x `kv_rows`, ffn_gate and ffn_up 256 x 512,
// ffn_down 512 x 256), f32 norms, a `type` token embedding of 1000 rows and, unless `tied`, a
// q6_K output layer; in the order llama.cpp's converter writes them, or with the output layer
// first (`output_first`, as llama-quantize orders the tensors outside the blocks).
GgufWriter quantized_llama(gguf::GgmlType type, std::uint32_t blocks, std::uint64_t kv_rows = 64,
                           bool tied = false, bool output_first = false);

// Writes DIR/llama-LAYERS.gguf: a llama of `layers` f16 blocks shaped like a 70B (n_embd 8192,
// 64 heads, 8 KV heads, n_ff 14336): 872 MB a block, plus 524 MB each for the token embedding
// and the output (sparse on disk). Returns its path.
std::string write_llama_70b_shape(const TempDir& dir, std::uint32_t layers);

// Writes DIR/mmproj-gemma3.gguf: a gemma3 projector header (896 px images in 14 px patches,
// a 1152-wide tower of 27 blocks and 16 heads; sparse on disk). Returns its path.
std::string write_gemma3_projector(const TempDir& dir);

}  // namespace gb10tune::testing
