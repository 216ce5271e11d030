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
#include "support/test_models.hpp"

namespace {

using gb10tune::gguf::GgmlType;
using namespace gb10tune::testing;

// Writes the model once, removes it at exit.
class SparseModel {
 public:
  SparseModel() {
    m_path = std::filesystem::temp_directory_path() /
             ("gb10tune-bench-" + std::to_string(::getpid()) + ".gguf");
    GgufWriter w = large_report_model();
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
