// How long reading a GGUF header takes: a sparse 18 GB model (64 blocks, 321 tensors) with a
// tokenizer-sized metadata section (150k tokens), read from disk, then turned into ModelFacts.
// The claim (DESIGN.md §6): milliseconds, whatever the size of the tensor data behind it.
// Also the largest real tokenizer, and hostile headers of empty nested arrays against the
// parsed header's memory budget (docs/gguf-reader.md).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_models.hpp"

namespace {

using gb10tune::gguf::GgmlType;
using namespace gb10tune::testing;

// A file written once (by `write`, which returns its size) under the temp directory, removed
// at exit.
class BenchFile {
 public:
  BenchFile(const std::string& name,
            const std::function<std::uint64_t(const std::filesystem::path&)>& write) {
    m_path = std::filesystem::temp_directory_path() /
             ("gb10tune-bench-" + std::to_string(::getpid()) + "-" + name + ".gguf");
    m_size = write(m_path);
  }
  ~BenchFile() {
    std::error_code ec;
    std::filesystem::remove(m_path, ec);
  }
  const std::filesystem::path& path() const { return m_path; }
  std::uint64_t size() const { return m_size; }

 private:
  std::filesystem::path m_path;
  std::uint64_t m_size = 0;
};

const BenchFile& model() {
  static const BenchFile instance(
      "model", [](const std::filesystem::path& path) { return large_report_model().write(path); });
  return instance;
}

// Reads `file` once per iteration; counts whether it was refused and the memory the parser
// charged when it was not.
void read_every_iteration(benchmark::State& state, const BenchFile& file) {
  bool refused = false;
  std::uint64_t memory = 0;
  for (auto _ : state) {
    auto parsed = gb10tune::gguf::read_gguf(file.path());
    refused = !parsed;
    memory = parsed ? parsed->memory_bytes() : 0;
    benchmark::DoNotOptimize(parsed);
  }
  state.counters["file_MB"] = static_cast<double>(file.size()) / 1e6;
  state.counters["refused"] = refused ? 1 : 0;
  state.counters["charged_MiB"] = static_cast<double>(memory) / (1 << 20);
}

void BM_ReadGgufHeader(benchmark::State& state) {
  const BenchFile& m = model();
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
  const BenchFile& m = model();
  for (auto _ : state) {
    auto file = gb10tune::gguf::read_gguf(m.path());
    auto facts = gb10tune::model::describe_model(*file);
    benchmark::DoNotOptimize(facts->bytes_read_per_token);
  }
}
BENCHMARK(BM_ReadHeaderAndDescribeModel)->Unit(benchmark::kMillisecond);

// The largest real tokenizer: 262,144 tokens (gemma3's count) with scores and types, and
// 500,000 merges (more than any BPE vocabulary ships).
void BM_ReadLargestVocabulary(benchmark::State& state) {
  static const BenchFile file("vocabulary", [](const std::filesystem::path& path) {
    GgufWriter w;
    add_large_vocabulary(w, 262'144, 500'000);
    return w.write(path);
  });
  read_every_iteration(state, file);
}
BENCHMARK(BM_ReadLargestVocabulary)->Unit(benchmark::kMillisecond);

// The hostile header that led to the budget: 22.4 million empty nested arrays (the most the
// 256 MiB header cap admits), a 268 MB header of zeros (sparse on disk).
void BM_ReadHostileNestedArrays(benchmark::State& state) {
  static const BenchFile file("hostile", [](const std::filesystem::path& path) {
    return write_empty_nested_arrays(path, "nested", 22'369'616);
  });
  read_every_iteration(state, file);
}
BENCHMARK(BM_ReadHostileNestedArrays)->Unit(benchmark::kMillisecond)->Iterations(1);

// The most of such arrays the budget admits (3 million: ~252 MiB charged): the slowest
// hostile header that still parses.
void BM_ReadNestedArraysWithinTheBudget(benchmark::State& state) {
  static const BenchFile file("within", [](const std::filesystem::path& path) {
    return write_empty_nested_arrays(path, "nested", 3'000'000);
  });
  read_every_iteration(state, file);
}
BENCHMARK(BM_ReadNestedArraysWithinTheBudget)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
