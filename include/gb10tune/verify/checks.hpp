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
  std::string source;                     // "launch record" or "flags"
};

// Check 1 (K2): GGML_CUDA_ENABLE_UNIFIED_MEMORY with any value fails; other GGML_CUDA_*
// variables are listed; an environ that could not be read fails and says to run with sudo.
std::vector<Finding> check_environment(const ProcessSnapshot& snapshot);

// What one run of the server logged about where the model went (llama.cpp 2026-08): the
// warning a build without a GPU backend prints whenever -ngl is given (at any verbosity), and
// from -lv 4 on `load_tensors: offloaded N/M layers to GPU` and the model buffer lines.
struct GpuLogEvidence {
  std::string log_name;                      // the file, for messages
  std::string no_gpu_line;                   // "warning: no usable GPU found, …"; "" if absent
  std::optional<std::uint32_t> offloaded;    // N of "offloaded N/M layers to GPU"
  std::optional<std::uint32_t> offloadable;  // M of the same line
  std::vector<std::string> device_buffers;   // model buffers on a device: "CUDA0 1858.63 MiB"
  std::vector<std::string> host_buffers;     // in host memory: "CPU_Mapped 2.50 MiB"

  // The log shows the model (or part of it) outside device memory: the warning, fewer layers
  // offloaded than there are, or model buffers only in host memory.
  bool against_gpu() const;
  // The log shows every layer offloaded and model buffers on a device. "offloaded M/M" alone
  // is not enough: a build without a GPU but with the RPC backend prints it too.
  bool all_layers_on_gpu() const;
  // The server has no GPU to put layers on (the warning, or every buffer in host memory
  // although no layer was held back), as opposed to layers held back by -ngl or by fitting.
  bool no_gpu_backend() const;
  // One line summing up what was found, naming the log, and why it counts against the GPU.
  std::string describe() const;
  // What to do when against_gpu().
  std::string fix() const;
};

// The part of `log_text` written by the latest start: from the last `==== gb10tune … launch`
// header, else from the last `common_params_print_info:` line and the warnings just above it
// (the log is appended to across restarts), else all of it.
std::string_view latest_run(std::string_view log_text);

// Reads the GPU evidence of `log_text`'s latest run (see latest_run).
GpuLogEvidence read_gpu_evidence(std::string_view log_text, std::string_view log_name);

// Check 2 (K3): resident memory against the plan, and NVML's per-process GPU figure: under
// 1 GiB while RSS is over 10 GB is the managed path; a process NVML does not list, or a log
// that shows the model in host memory, fails. Without NVML and without the log the answer is
// unknown (warn), never ok. `nvml` may be unloaded; `log` is null when no log was read.
std::vector<Finding> check_memory(const ProcessSnapshot& snapshot, const gpu::NvmlReport& nvml,
                                  const Expectations& expected,
                                  const GpuLogEvidence* log = nullptr);

// Backs the K1 finding "all layers on the GPU" (id all-layers-on-gpu, which judges only the
// -ngl flag) with evidence: the log shows the layers on a device (ok) or not (fail), or NVML
// holds at least the planned weights for `pid` (ok); without either it becomes a warning
// naming what is missing. Findings with other ids are left alone.
void confirm_gpu_layers(Finding& finding, const GpuLogEvidence* log, const gpu::NvmlReport& nvml,
                        int pid, const Expectations& expected);

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
