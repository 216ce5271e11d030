// How long `gb10tune launch --dry-run` takes from start to exit: the GGUF header of a sparse
// 18 GB model (64 blocks, 321 tensors, a 150k-token vocabulary), the llama-server's --help
// (the stand-in prints a real build's), the settings, the clean environment, the memory plan
// and the fit search (--fit; on a machine with less than ~60 GB the profile's 3 x 192K cells
// do not fit beside the 18 GB of weights, and the bisection runs).
// The budget (issue 12): 20 dry runs in well under 2 s. The counter `twenty_runs_s` is the time
// of 20 runs; each iteration is one run as a separate process.
// BM_DescribeOverlongArchitectureName: a corrupt header's mebibyte-long architecture name.
// Run: build/bench/plan_bench
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/platform/process.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_models.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace gb10tune::testing;

// The model and a state directory, written once and removed at exit.
class Setup {
 public:
  Setup() {
    m_dir = fs::temp_directory_path() / ("gb10tune-plan-bench-" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
    m_model = m_dir / "Qwen3.8-27B-Q4_K_M.gguf";
    GgufWriter w = large_report_model();
    m_bytes = w.write(m_model);
    ::setenv("XDG_STATE_HOME", (m_dir / "state").c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", (m_dir / "config").c_str(), 1);
  }
  ~Setup() {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  const fs::path& model() const { return m_model; }
  std::uint64_t bytes() const { return m_bytes; }

 private:
  fs::path m_dir;
  fs::path m_model;
  std::uint64_t m_bytes = 0;
};

const Setup& setup() {
  static const Setup instance;
  return instance;
}

void BM_LaunchDryRun(benchmark::State& state) {
  const Setup& s = setup();
  const std::vector<std::string> argv = {GB10TUNE_BINARY,  "launch",
                                         "--dry-run",      "--json",
                                         "--model",        s.model().string(),
                                         "--llama-server", GB10TUNE_STAND_IN_SERVER,
                                         "--reserve",      "0",
                                         "--overhead",     "1GB",
                                         "--fit"};
  double seconds = 0;
  for (auto _ : state) {
    const auto begin = std::chrono::steady_clock::now();
    const auto run = gb10tune::platform::run_capture(argv, 60s);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    // 0: planned (fitted where needed); 3: nothing fits this machine. Both are complete plans.
    if (!run || (run->exit_status != 0 && run->exit_status != 3)) {
      state.SkipWithError(run ? run->output.c_str() : run.error().message.c_str());
      return;
    }
  }
  state.counters["twenty_runs_s"] = seconds / static_cast<double>(state.iterations()) * 20.0;
  state.counters["file_GB"] = static_cast<double>(s.bytes()) / 1e9;
}
BENCHMARK(BM_LaunchDryRun)->Unit(benchmark::kMillisecond)->Iterations(20);

// A corrupt header whose architecture name is a mebibyte long: the nearest-family search
// compares only its first 64 characters, so describing it costs what reading it costs
// (quadratic before: 1.2 s). The argument is the name's length.
void BM_DescribeOverlongArchitectureName(benchmark::State& state) {
  GgufWriter w;
  w.add("general.architecture",
        gguf_string("qwen3moe" + std::string(static_cast<std::size_t>(state.range(0)), 'x')))
      .tensor("token_embd.weight", {64, 100}, gb10tune::gguf::GgmlType::f16);
  for (auto _ : state) {
    auto facts = describe(w);
    if (!facts || facts->supported) {
      state.SkipWithError("the overlong name was not refused as unsupported");
      return;
    }
    benchmark::DoNotOptimize(facts->unsupported_reason.size());
  }
}
BENCHMARK(BM_DescribeOverlongArchitectureName)
    ->Unit(benchmark::kMillisecond)
    ->Arg(1 << 10)
    ->Arg(1 << 20);

}  // namespace
BENCHMARK_MAIN();
