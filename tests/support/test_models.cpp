#include "support/test_models.hpp"

#include <cstdio>

namespace gb10tune::testing {

Expected<model::ModelFacts> describe(const GgufWriter& w, const std::string& name) {
  const std::string bytes = w.bytes();
  const auto file =
      gguf::parse_gguf({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, name);
  if (!file) {
    return file.error();
  }
  return model::describe_model(*file);
}

GgufWriter llama_header(std::uint32_t blocks, std::uint32_t context, std::uint32_t embd,
                        std::uint32_t heads, std::uint32_t kv_heads) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("llama"))
      .add("llama.block_count", gguf_uint32(blocks))
      .add("llama.context_length", gguf_uint32(context))
      .add("llama.embedding_length", gguf_uint32(embd))
      .add("llama.attention.head_count", gguf_uint32(heads))
      .add("llama.attention.head_count_kv", gguf_uint32(kv_heads));
  return w;
}

GgufWriter report_model(std::uint32_t blocks, std::uint32_t nextn) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("qwen35"))
      .add("general.name", gguf_string("Qwen3.8-27B"))
      .add("qwen35.block_count", gguf_uint32(blocks))
      .add("qwen35.context_length", gguf_uint32(262144))
      .add("qwen35.embedding_length", gguf_uint32(5120))
      .add("qwen35.attention.head_count", gguf_uint32(24))
      .add("qwen35.attention.head_count_kv", gguf_uint32(4))
      .add("qwen35.attention.key_length", gguf_uint32(256))
      .add("qwen35.attention.value_length", gguf_uint32(256))
      .add("qwen35.full_attention_interval", gguf_uint32(4))
      .add("qwen35.ssm.conv_kernel", gguf_uint32(4))
      .add("qwen35.ssm.inner_size", gguf_uint32(6144))
      .add("qwen35.ssm.state_size", gguf_uint32(128))
      .add("qwen35.ssm.time_step_rank", gguf_uint32(48))
      .add("qwen35.ssm.group_count", gguf_uint32(16));
  if (nextn > 0) {
    w.add("qwen35.nextn_predict_layers", gguf_uint32(nextn));
  }
  return w;
}

plan::PlanConfig report_tuned_config() {
  plan::PlanConfig config;
  config.ctx_total = 589824;
  config.slots = 3;
  config.kv_unified = true;
  config.mtp = true;
  config.draft_n_max = 4;
  config.cache_ram_bytes = 24576ull << 20;
  return config;
}

GgufWriter tiny_qwen35_model(bool mtp, std::uint32_t context_length) {
  constexpr std::uint64_t kEmbd = 64, kHeads = 4, kHeadsKv = 2, kHeadDim = 32, kFf = 128;
  constexpr std::uint64_t kVocab = 101, kState = 16, kGroups = 2, kVHeads = 4, kConv = 4;
  constexpr std::uint32_t kMain = 8;
  const std::uint32_t blocks = kMain + (mtp ? 1 : 0);
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "\u2581"};  // + SentencePiece's space
  std::vector<std::int32_t> types = {2, 3, 3, 1};
  std::vector<int> text_bytes = {0x09, 0x0A};  // tab, newline and printable ASCII
  for (int b = 0x20; b < 0x7F; ++b) {
    text_bytes.push_back(b);
  }
  for (const int b : text_bytes) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.emplace_back(name);
    types.push_back(6);
  }
  std::vector<GgufValueBytes> scores(tokens.size(), gguf_float32(0.0f));
  GgufWriter w;
  w.add("general.architecture", gguf_string("qwen35"))
      .add("general.name", gguf_string(mtp ? "tiny-qwen35" : "tiny-qwen35-no-mtp"))
      .add("qwen35.block_count", gguf_uint32(blocks))
      .add("qwen35.context_length", gguf_uint32(context_length))
      .add("qwen35.embedding_length", gguf_uint32(kEmbd))
      .add("qwen35.feed_forward_length", gguf_uint32(kFf))
      .add("qwen35.attention.head_count", gguf_uint32(kHeads))
      .add("qwen35.attention.head_count_kv", gguf_uint32(kHeadsKv))
      .add("qwen35.attention.key_length", gguf_uint32(kHeadDim))
      .add("qwen35.attention.value_length", gguf_uint32(kHeadDim))
      .add("qwen35.rope.dimension_count", gguf_uint32(kHeadDim))
      .add("qwen35.rope.dimension_sections", gguf_int32_array({6, 5, 5, 0}))
      .add("qwen35.rope.freq_base", gguf_float32(1e7f))
      .add("qwen35.attention.layer_norm_rms_epsilon", gguf_float32(1e-6f))
      .add("qwen35.full_attention_interval", gguf_uint32(4));
  if (mtp) {
    w.add("qwen35.nextn_predict_layers", gguf_uint32(1));
  }
  w.add("qwen35.ssm.conv_kernel", gguf_uint32(kConv))
      .add("qwen35.ssm.inner_size", gguf_uint32(kState * kVHeads))
      .add("qwen35.ssm.state_size", gguf_uint32(kState))
      .add("qwen35.ssm.time_step_rank", gguf_uint32(kVHeads))
      .add("qwen35.ssm.group_count", gguf_uint32(kGroups))
      .add("general.file_type", gguf_uint32(0))
      .add("tokenizer.ggml.model", gguf_string("llama"))
      .add("tokenizer.ggml.tokens", gguf_string_array(tokens))
      .add("tokenizer.ggml.scores", gguf_array(gguf::ValueType::float32, scores))
      .add("tokenizer.ggml.token_type", gguf_int32_array(types))
      .add("tokenizer.ggml.unknown_token_id", gguf_uint32(0))
      .add("tokenizer.ggml.bos_token_id", gguf_uint32(1))
      .add("tokenizer.ggml.eos_token_id", gguf_uint32(2))
      .add("tokenizer.ggml.add_bos_token", gguf_bool(true));

  using gguf::GgmlType;
  const std::uint64_t key_dim = kState * kGroups;
  const std::uint64_t value_dim = kState * kVHeads;
  const std::uint64_t conv_dim = 2 * key_dim + value_dim;
  // Shapes as GGUF stores them: the input dimension first.
  w.tensor("token_embd.weight", {kEmbd, kVocab}, GgmlType::f32)
      .tensor("output_norm.weight", {kEmbd}, GgmlType::f32);
  const auto attention = [&](const std::string& blk) {
    w.tensor(blk + "attn_q.weight", {kEmbd, kHeadDim * kHeads * 2}, GgmlType::f32)
        .tensor(blk + "attn_k.weight", {kEmbd, kHeadDim * kHeadsKv}, GgmlType::f32)
        .tensor(blk + "attn_v.weight", {kEmbd, kHeadDim * kHeadsKv}, GgmlType::f32)
        .tensor(blk + "attn_output.weight", {kHeadDim * kHeads, kEmbd}, GgmlType::f32)
        .tensor(blk + "attn_q_norm.weight", {kHeadDim}, GgmlType::f32)
        .tensor(blk + "attn_k_norm.weight", {kHeadDim}, GgmlType::f32);
  };
  const auto ffn = [&](const std::string& blk) {
    w.tensor(blk + "ffn_gate.weight", {kEmbd, kFf}, GgmlType::f32)
        .tensor(blk + "ffn_up.weight", {kEmbd, kFf}, GgmlType::f32)
        .tensor(blk + "ffn_down.weight", {kFf, kEmbd}, GgmlType::f32);
  };
  for (std::uint32_t il = 0; il < blocks; ++il) {
    const std::string blk = "blk." + std::to_string(il) + ".";
    w.tensor(blk + "attn_norm.weight", {kEmbd}, GgmlType::f32)
        .tensor(blk + "post_attention_norm.weight", {kEmbd}, GgmlType::f32);
    if (il >= kMain || (il + 1) % 4 == 0) {
      attention(blk);
    } else {
      w.tensor(blk + "attn_qkv.weight", {kEmbd, conv_dim}, GgmlType::f32)
          .tensor(blk + "attn_gate.weight", {kEmbd, value_dim}, GgmlType::f32)
          .tensor(blk + "ssm_conv1d.weight", {kConv, conv_dim}, GgmlType::f32)
          .tensor(blk + "ssm_dt.bias", {kVHeads}, GgmlType::f32)
          .tensor(blk + "ssm_a", {kVHeads}, GgmlType::f32)
          .tensor(blk + "ssm_beta.weight", {kEmbd, kVHeads}, GgmlType::f32)
          .tensor(blk + "ssm_alpha.weight", {kEmbd, kVHeads}, GgmlType::f32)
          .tensor(blk + "ssm_norm.weight", {kState}, GgmlType::f32)
          .tensor(blk + "ssm_out.weight", {value_dim, kEmbd}, GgmlType::f32);
    }
    ffn(blk);
    if (il >= kMain) {
      w.tensor(blk + "nextn.eh_proj.weight", {2 * kEmbd, kEmbd}, GgmlType::f32)
          .tensor(blk + "nextn.enorm.weight", {kEmbd}, GgmlType::f32)
          .tensor(blk + "nextn.hnorm.weight", {kEmbd}, GgmlType::f32)
          .tensor(blk + "nextn.shared_head_norm.weight", {kEmbd}, GgmlType::f32);
    }
  }
  return w;
}

void add_large_model_tensors(GgufWriter& w) {
  using gguf::GgmlType;
  w.tensor("token_embd.weight", {5120, 248320}, GgmlType::q4_k);
  for (int il = 0; il < 64; ++il) {
    const std::string blk = "blk." + std::to_string(il) + ".";
    w.tensor(blk + "ffn_up.weight", {5120, 17408}, GgmlType::q6_k)
        .tensor(blk + "ffn_gate.weight", {5120, 17408}, GgmlType::q6_k)
        .tensor(blk + "ffn_down.weight", {17408, 5120}, GgmlType::q6_k)
        .tensor(blk + "attn_qkv.weight", {5120, 10240}, GgmlType::q4_k)
        .tensor(blk + "attn_output.weight", {5120, 5120}, GgmlType::q6_k);
  }
}

GgufWriter large_report_model() {
  GgufWriter w = large_report_model_metadata();
  add_large_model_tensors(w);
  return w;
}

GgufWriter large_report_model_metadata() {
  GgufWriter w = report_model();
  std::vector<std::string> tokens;
  std::vector<std::int32_t> types;
  for (int i = 0; i < 150000; ++i) {
    tokens.push_back("tok" + std::to_string(i));
    types.push_back(1);
  }
  w.add("tokenizer.ggml.tokens", gguf_string_array(tokens))
      .add("tokenizer.ggml.token_type", gguf_int32_array(types));
  return w;
}

void add_large_vocabulary(GgufWriter& w, std::uint32_t tokens, std::uint32_t merges) {
  std::vector<std::string> texts;
  std::vector<GgufValueBytes> scores;
  std::vector<std::int32_t> types;
  texts.reserve(tokens);
  for (std::uint32_t i = 0; i < tokens; ++i) {
    texts.push_back(i % 8 == 0 ? "\xE2\x96\x81long_token_piece_" + std::to_string(i)
                               : "tok" + std::to_string(i));
    scores.push_back(gguf_float32(-static_cast<float>(i)));
    types.push_back(1);
  }
  w.add("tokenizer.ggml.tokens", gguf_string_array(texts))
      .add("tokenizer.ggml.scores", gguf_array(gguf::ValueType::float32, scores))
      .add("tokenizer.ggml.token_type", gguf_int32_array(types));
  texts.clear();
  texts.reserve(merges);
  for (std::uint32_t i = 0; i < merges; ++i) {
    texts.push_back(i % 8 == 0 ? "\xC4\xA0long_merge_left " + std::to_string(i)
                               : "\xC4\xA0t " + std::to_string(i));
  }
  w.add("tokenizer.ggml.merges", gguf_string_array(texts));
}

std::uint64_t write_empty_nested_arrays(const std::filesystem::path& path, const std::string& key,
                                        std::uint64_t count) {
  GgufWriter w;
  w.add(key, gguf_raw(9, le32(9) + le64(count)));
  const std::string header = w.bytes();
  write_bytes(path, header);
  const std::uint64_t size = header.size() + count * 12;
  std::filesystem::resize_file(path, size);
  return size;
}

namespace {

// The widths of a llama block: n_embd, the K/V projection's rows, n_ff.
struct LlamaBlockShape {
  std::uint64_t embd = 0;
  std::uint64_t kv = 0;
  std::uint64_t ff = 0;
};

// A llama header: `blocks` blocks of `shape`, `heads` query and `heads_kv` KV heads.
void add_llama_header(GgufWriter& w, std::uint32_t blocks, std::uint32_t context,
                      const LlamaBlockShape& shape, std::uint32_t heads, std::uint32_t heads_kv) {
  w.add("general.architecture", gguf_string("llama"))
      .add("llama.block_count", gguf_uint32(blocks))
      .add("llama.context_length", gguf_uint32(context))
      .add("llama.embedding_length", gguf_uint32(static_cast<std::uint32_t>(shape.embd)))
      .add("llama.feed_forward_length", gguf_uint32(static_cast<std::uint32_t>(shape.ff)))
      .add("llama.attention.head_count", gguf_uint32(heads))
      .add("llama.attention.head_count_kv", gguf_uint32(heads_kv))
      .add("llama.attention.layer_norm_rms_epsilon", gguf_float32(1e-5f));
}

// Block `il` of a llama: f32 norms and `type` matrices, in the converter's order.
void add_llama_block(GgufWriter& w, std::uint32_t il, const LlamaBlockShape& shape,
                     gguf::GgmlType type) {
  const std::string blk = "blk." + std::to_string(il) + ".";
  w.tensor(blk + "attn_norm.weight", {shape.embd}, gguf::GgmlType::f32)
      .tensor(blk + "attn_q.weight", {shape.embd, shape.embd}, type)
      .tensor(blk + "attn_k.weight", {shape.embd, shape.kv}, type)
      .tensor(blk + "attn_v.weight", {shape.embd, shape.kv}, type)
      .tensor(blk + "attn_output.weight", {shape.embd, shape.embd}, type)
      .tensor(blk + "ffn_norm.weight", {shape.embd}, gguf::GgmlType::f32)
      .tensor(blk + "ffn_gate.weight", {shape.embd, shape.ff}, type)
      .tensor(blk + "ffn_up.weight", {shape.embd, shape.ff}, type)
      .tensor(blk + "ffn_down.weight", {shape.ff, shape.embd}, type);
}

}  // namespace

GgufWriter quantized_llama(gguf::GgmlType type, std::uint32_t blocks, std::uint64_t kv_rows,
                           bool tied, bool output_first) {
  using gguf::GgmlType;
  GgufWriter w;
  const LlamaBlockShape shape{256, kv_rows, 512};
  add_llama_header(w, blocks, 4096, shape, 4, 1);
  const auto output = [&] {
    w.tensor("output_norm.weight", {256}, GgmlType::f32);
    if (!tied) {
      w.tensor("output.weight", {256, 1000}, GgmlType::q6_k);
    }
  };
  if (output_first) {
    output();
  }
  w.tensor("token_embd.weight", {256, 1000}, type);
  for (std::uint32_t il = 0; il < blocks; ++il) {
    add_llama_block(w, il, shape, type);
  }
  if (!output_first) {
    output();
  }
  return w;
}

std::string write_llama_70b_shape(const TempDir& dir, std::uint32_t layers) {
  GgufWriter w;
  const LlamaBlockShape shape{8192, 1024, 14336};
  add_llama_header(w, layers, 32768, shape, 64, 8);
  w.add("llama.rope.dimension_count", gguf_uint32(128));
  w.tensor("token_embd.weight", {8192, 32000}, gguf::GgmlType::f16);
  w.tensor("output_norm.weight", {8192}, gguf::GgmlType::f32);
  w.tensor("output.weight", {8192, 32000}, gguf::GgmlType::f16);
  for (std::uint32_t il = 0; il < layers; ++il) {
    add_llama_block(w, il, shape, gguf::GgmlType::f16);
  }
  const auto path = dir.path() / ("llama-" + std::to_string(layers) + ".gguf");
  w.write(path);
  return path.string();
}

std::string write_gemma3_projector(const TempDir& dir) {
  GgufWriter p;
  p.add("general.architecture", gguf_string("clip"));
  p.add("clip.projector_type", gguf_string("gemma3"));
  p.add("clip.has_vision_encoder", gguf_bool(true));
  p.add("clip.vision.image_size", gguf_uint32(896));
  p.add("clip.vision.patch_size", gguf_uint32(14));
  p.add("clip.vision.embedding_length", gguf_uint32(1152));
  p.add("clip.vision.feed_forward_length", gguf_uint32(4304));
  p.add("clip.vision.block_count", gguf_uint32(27));
  p.add("clip.vision.attention.head_count", gguf_uint32(16));
  p.tensor("v.patch_embd.weight", {14, 14, 3, 1152}, gguf::GgmlType::f16);
  p.tensor("mm.input_projection.weight", {2560, 1152}, gguf::GgmlType::f16);
  const auto path = (dir.path() / "mmproj-gemma3.gguf").string();
  p.write(path);
  return path;
}

}  // namespace gb10tune::testing
