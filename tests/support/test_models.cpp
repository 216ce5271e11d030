#include "support/test_models.hpp"

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

}  // namespace gb10tune::testing
