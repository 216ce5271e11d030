// Writes the seed corpus of gguf_fuzz into a directory: small valid files of every value type
// and of each supported architecture, and a few broken ones, made with the tests' writer.
//
//   gguf_fuzz_seeds DIR
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "support/gguf_writer.hpp"

namespace {

using gb10tune::gguf::GgmlType;
using gb10tune::gguf::ValueType;
using namespace gb10tune::testing;

GgufWriter every_value_type() {
  GgufWriter w;
  w.add("u8", gguf_uint8(1))
      .add("i8", gguf_int8(-1))
      .add("u16", gguf_uint16(2))
      .add("i16", gguf_int16(-2))
      .add("u32", gguf_uint32(3))
      .add("i32", gguf_int32(-3))
      .add("u64", gguf_uint64(4))
      .add("i64", gguf_int64(-4))
      .add("f32", gguf_float32(0.5f))
      .add("f64", gguf_float64(0.25))
      .add("b", gguf_bool(true))
      .add("s", gguf_string("text"))
      .add("strings", gguf_string_array({"a", "bb"}))
      .add("ints", gguf_int32_array({1, -2, 3}))
      .add("nested", gguf_array(ValueType::array,
                                {gguf_uint32_array({1, 2}), gguf_bool_array({true, false})}));
  return w;
}

GgufWriter tensors_of_every_type() {
  GgufWriter w;
  w.alignment(64);
  int i = 0;
  for (const auto& info : gb10tune::gguf::ggml_types()) {
    w.tensor("t" + std::to_string(i++), {info.block_size, 2}, info.type);
  }
  return w;
}

GgufWriter qwen35(bool moe) {
  const std::string a = moe ? "qwen35moe" : "qwen35";
  GgufWriter w;
  w.add("general.architecture", gguf_string(a))
      .add(a + ".block_count", gguf_uint32(9))
      .add(a + ".context_length", gguf_uint32(4096))
      .add(a + ".embedding_length", gguf_uint32(256))
      .add(a + ".attention.head_count", gguf_uint32(4))
      .add(a + ".attention.head_count_kv", gguf_int32_array({1, 1, 1, 2, 1, 1, 1, 2, 1}))
      .add(a + ".attention.key_length", gguf_uint32(64))
      .add(a + ".attention.value_length", gguf_uint32(64))
      .add(a + ".full_attention_interval", gguf_uint32(4))
      .add(a + ".nextn_predict_layers", gguf_uint32(1))
      .add(a + ".ssm.conv_kernel", gguf_uint32(4))
      .add(a + ".ssm.inner_size", gguf_uint32(512))
      .add(a + ".ssm.state_size", gguf_uint32(64))
      .add(a + ".ssm.time_step_rank", gguf_uint32(8))
      .add(a + ".ssm.group_count", gguf_uint32(2))
      .tensor("token_embd.weight", {256, 4}, GgmlType::q8_0)
      .tensor("blk.3.attn_q.weight", {256, 4}, GgmlType::f16)
      .tensor("blk.8.nextn.eh_proj.weight", {256, 2}, GgmlType::q4_k);
  if (moe) {
    w.add(a + ".expert_count", gguf_uint32(8))
        .add(a + ".expert_used_count", gguf_uint32(2))
        .tensor("blk.0.ffn_up_exps.weight", {256, 2, 8}, GgmlType::q4_k);
  }
  return w;
}

GgufWriter windowed(const std::string& a, std::uint32_t pattern) {
  GgufWriter w;
  w.add("general.architecture", gguf_string(a))
      .add(a + ".block_count", gguf_uint32(8))
      .add(a + ".context_length", gguf_uint32(8192))
      .add(a + ".embedding_length", gguf_uint32(512))
      .add(a + ".attention.head_count", gguf_uint32(8))
      .add(a + ".attention.head_count_kv", gguf_uint32(2))
      .add(a + ".attention.sliding_window", gguf_uint32(128))
      .add(a + ".attention.sliding_window_pattern", gguf_uint32(pattern))
      .add(a + ".attention.key_length_swa", gguf_uint32(32))
      .add(a + ".expert_count", gguf_uint32(4))
      .add(a + ".expert_used_count", gguf_uint32(1))
      .tensor("output.weight", {512, 2}, GgmlType::mxfp4);
  return w;
}

GgufWriter dense(const std::string& a) {
  GgufWriter w;
  w.add("general.architecture", gguf_string(a))
      .add(a + ".block_count", gguf_uint32(4))
      .add(a + ".context_length", gguf_uint32(2048))
      .add(a + ".embedding_length", gguf_uint32(128))
      .add(a + ".attention.head_count", gguf_uint32(4))
      .add(a + ".attention.head_count_kv", gguf_uint32(2))
      .tensor("token_embd.weight", {128, 8}, GgmlType::f32);
  return w;
}

GgufWriter mmproj() {
  GgufWriter w;
  w.add("general.architecture", gguf_string("clip"))
      .add("clip.projector_type", gguf_string("mlp"))
      .add("clip.has_vision_encoder", gguf_bool(true))
      .tensor("mm.0.weight", {64, 64}, GgmlType::f16);
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gguf_fuzz_seeds DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::string, GgufWriter>> seeds{
      {"values-v3", every_value_type()},
      {"values-v2",
       [] {
         GgufWriter w(2);
         w.add("general.architecture", gguf_string("llama"));
         return w;
       }()},
      {"tensors", tensors_of_every_type()},
      {"qwen35", qwen35(false)},
      {"qwen35moe", qwen35(true)},
      {"gemma3", windowed("gemma3", 6)},
      {"gpt-oss", windowed("gpt-oss", 2)},
      {"llama", dense("llama")},
      {"qwen3", dense("qwen3")},
      {"mmproj", mmproj()},
      {"unknown-arch", dense("mamba2")},
  };
  for (const auto& [name, writer] : seeds) {
    write_bytes(dir / (name + ".gguf"), writer.bytes());
  }
  // A few broken ones: truncated, and with an absurd count.
  const std::string model = qwen35(false).bytes();
  write_bytes(dir / "truncated.gguf", model.substr(0, model.size() / 2));
  std::string absurd = every_value_type().bytes();
  patch_u64(absurd, 16, 1ull << 40);
  write_bytes(dir / "absurd-count.gguf", absurd);
  std::cout << "wrote " << seeds.size() + 2 << " seeds to " << dir.string() << "\n";
  return 0;
}
