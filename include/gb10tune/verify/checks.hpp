// The checks of `gb10tune verify`, one function per group, each turning what was read about
// one llama-server process into findings (ok / warn / fail, the evidence, the K-fact, the
// fix). They print nothing and read nothing but their arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/gpu/gpu_info.hpp"
#include "gb10tune/server/rules.hpp"
#include "gb10tune/sys/cpuinfo.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/verify/server_probe.hpp"

namespace gb10tune::verify {

using server::Finding;
using server::Severity;

// What one process looked like, read once from /proc.
struct ProcessSnapshot {
  sys::ServerCandidate process;
  std::optional<platform::Environment> env;  // nullopt when environ could not be read
  std::optional<sys::ProcError> env_error;
  std::optional<sys::ProcessMemory> memory;
  std::optional<sys::ProcError> memory_error;
  bool changed = false;  // the process exited or its pid was reused while it was read
};

// Reads environ and memory of `process` and re-reads its stat afterwards, so that a process
// that exited (or whose pid was reused) during the reads is marked `changed`.
ProcessSnapshot take_snapshot(const platform::Sysroot& root, sys::ServerCandidate process);

// What the running server should look like, from the launch record or the flags.
struct Expectations {
  std::optional<std::uint32_t> slots;
  std::optional<std::uint64_t> ctx_per_slot;  // as the server reports it per slot
  std::optional<bool> speculative;            // MTP drafting expected on
  std::optional<std::uint64_t> weights_bytes;
  std::optional<std::uint64_t> kv_bytes;  // KV + recurrent state
  // What the process should hold once loaded (the plan's load figure plus its calibration),
  // the prompt cache's limit that may come on top, and "cpu"/"cuda" (how to measure).
  std::optional<std::uint64_t> load_bytes;
  std::uint64_t cache_ram_bytes = 0;
  std::string backend;
  std::string source;  // "launch record" or "flags"
};

// Check 1 (K2): GGML_CUDA_ENABLE_UNIFIED_MEMORY with any value fails; other GGML_CUDA_*
// variables are listed; an environ that could not be read fails and says to run with sudo.
std::vector<Finding> check_environment(const ProcessSnapshot& snapshot);

// Check 2 (K3): resident memory against the plan, and NVML's per-process GPU figure: under
// 1 GiB while RSS is over 10 GB is the managed path. `nvml` may be unloaded. With a planned
// load figure, also "plan-vs-measured": the measured memory (plan/calibration.hpp) against it,
// with the error in %; a warning when the process holds more than 5% over the plan plus the
// prompt cache's limit, or when the figure cannot be measured.
std::vector<Finding> check_memory(const ProcessSnapshot& snapshot, const gpu::NvmlReport& nvml,
                                  const Expectations& expected);

// Check 4: /health, then /props and /slots against `expected`. `url` names the server in the
// evidence.
std::vector<Finding> check_server(ServerProbe& probe, const Expectations& expected,
                                  std::string_view url);

// Check 6 (--smoke): one short chat completion and its timings.
std::vector<Finding> check_smoke(ServerProbe& probe);

// Check 5: the last `system_info:` line of `log_text` (this run's, the log is appended to)
// against the CPU's real features (K11, the GGML_NATIVE trap), and how often a prompt state
// was skipped since then (`exceeds cache size limit`, K8). `log_name` names the file.
std::vector<Finding> check_log(std::string_view log_text, std::string_view log_name,
                               const sys::CpuInfo* cpu);

// The ggml CPU feature names (`DOTPROD`, `MATMUL_INT8`, `SVE`, `AVX2`, …) listed as "= 1" in
// a system_info line.
std::vector<std::string> parse_system_info_features(std::string_view line);

}  // namespace gb10tune::verify
