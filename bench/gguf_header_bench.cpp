// How long reading a GGUF header takes: a sparse 18 GB model (64 blocks, 321 tensors) with a
// tokenizer-sized metadata section (150k tokens), read from disk, then turned into ModelFacts.
// The claim (DESIGN.md §6): milliseconds, whatever the size of the tensor data behind it.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "support/gguf_writer.hpp"

namespace {

using gb10tune::gguf::GgmlType;
using namespace gb10tune::testing;

// Writes the model once, removes it at exit.
class SparseModel {
 public:
  SparseModel() {
    m_path = std::filesystem::temp_directory_path() /
             ("gb10tune-bench-" + std::to_string(::getpid()) + ".gguf");
    GgufWriter w;
    w.add("general.architecture", gguf_string("qwen35"))
        .add("qwen35.block_count", gguf_uint32(65))
        .add("qwen35.context_length", gguf_uint32(262144))
        .add("qwen35.embedding_length", gguf_uint32(5120))
        .add("qwen35.attention.head_count", gguf_uint32(24))
        .add("qwen35.attention.head_count_kv", gguf_uint32(4))
        .add("qwen35.attention.key_length", gguf_uint32(256))
        .add("qwen35.attention.value_length", gguf_uint32(256))
        .add("qwen35.full_attention_interval", gguf_uint32(4))
        .add("qwen35.nextn_predict_layers", gguf_uint32(1))
        .add("qwen35.ssm.conv_kernel", gguf_uint32(4))
        .add("qwen35.ssm.inner_size", gguf_uint32(6144))
        .add("qwen35.ssm.state_size", gguf_uint32(128))
        .add("qwen35.ssm.time_step_rank", gguf_uint32(48))
        .add("qwen35.ssm.group_count", gguf_uint32(16));
    std::vector<std::string> tokens;
    std::vector<std::int32_t> types;
    for (int i = 0; i < 150000; ++i) {
      tokens.push_back("tok" + std::to_string(i));
      types.push_back(1);
    }
    w.add("tokenizer.ggml.tokens", gguf_string_array(tokens))
        .add("tokenizer.ggml.token_type", gguf_int32_array(types));
    w.tensor("token_embd.weight", {5120, 248320}, GgmlType::q4_k);
    for (int il = 0; il < 64; ++il) {
      const std::string blk = "blk." + std::to_string(il) + ".";
      w.tensor(blk + "ffn_up.weight", {5120, 17408}, GgmlType::q6_k)
          .tensor(blk + "ffn_gate.weight", {5120, 17408}, GgmlType::q6_k)
          .tensor(blk + "ffn_down.weight", {17408, 5120}, GgmlType::q6_k)
          .tensor(blk + "attn_qkv.weight", {5120, 10240}, GgmlType::q4_k)
          .tensor(blk + "attn_output.weight", {5120, 5120}, GgmlType::q6_k);
    }
    m_size = w.write(m_path);
  }
  ~SparseModel() {
    std::error_code ec;
    std::filesystem::remove(m_path, ec);
  }
  const std::filesystem::path& path() const { return m_path; }
  std::uint64_t size() const { return m_size; }

 private:
  std::filesystem::path m_path;
  std::uint64_t m_size = 0;
};

const SparseModel& model() {
  static const SparseModel instance;
  return instance;
}

void BM_ReadGgufHeader(benchmark::State& state) {
  const SparseModel& m = model();
  for (auto _ : state) {
    auto file = gb10tune::gguf::read_gguf(m.path());
    if (!file) {
      state.SkipWithError(file.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(file->data_offset());
  }
  state.counters["file_GB"] = static_cast<double>(m.size()) / 1e9;
}
BENCHMARK(BM_ReadGgufHeader)->Unit(benchmark::kMillisecond);

void BM_ReadHeaderAndDescribeModel(benchmark::State& state) {
  const SparseModel& m = model();
  for (auto _ : state) {
    auto file = gb10tune::gguf::read_gguf(m.path());
    auto facts = gb10tune::model::describe_model(*file);
    benchmark::DoNotOptimize(facts->bytes_read_per_token);
  }
}
BENCHMARK(BM_ReadHeaderAndDescribeModel)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
