// `gb10tune probe`: what this machine is and how llama.cpp should be built and run on it.
// Computes a ProbeResult; rendering lives in report/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/bench/bandwidth_bench.hpp"
#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/probe/advice.hpp"
#include "gb10tune/probe/build_advice.hpp"
#include "gb10tune/probe/llama_binaries.hpp"
#include "gb10tune/sys/cgroup.hpp"
#include "gb10tune/sys/cpuinfo.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "gb10tune/sys/os_info.hpp"

namespace gb10tune::probe {

// What the machine's memory allows a model to use (K3, K19).
struct MemoryBudget {
  std::uint64_t bytes = 0;  // min(MemAvailable, cgroup limit − cgroup usage)
  std::string source;       // "MemAvailable" or "cgroup memory.max"
};

// What `launch` plans against on this machine (plan/device_plan.hpp): one pool on a GB10, an
// integrated GPU or without a GPU (everything against the memory budget − the reserve, K19);
// with discrete GPUs each GPU's NVML free memory − the GPU reserve for device buffers, and
// the memory budget − the reserve for host buffers.
struct PlanBudgets {
  bool per_device = false;
  std::vector<plan::GpuBudget> gpus;  // per_device only, in CUDA order ("CUDA0", …)
  std::uint64_t reserve_bytes = 0;    // kept free in host memory (--reserve)
  std::uint64_t gpu_reserve_bytes = 0;
  // MemoryBudget::bytes − reserve (never below 0); nullopt when memory was not read.
  std::optional<std::uint64_t> host_available_bytes;
};

// The seam for the quick bandwidth check (`probe --quick-bench`): filled by the bench
// module when asked for, otherwise says how to get it.
struct BandwidthCheck {
  std::optional<bench::BandwidthRun> run;  // set when the quick bench ran
  std::string summary;                     // one line for the text report
};

// Everything probe found. Read errors are collected, not thrown: the rest is still reported.
struct ProbeResult {
  std::string generated_at;  // ISO 8601, UTC
  sys::OsInfo os;
  std::optional<sys::CpuInfo> cpu;
  std::optional<sys::MemInfo> memory;
  sys::CgroupMemory cgroup;
  std::optional<MemoryBudget> budget;
  PlanBudgets plan_budgets;
  gpu::GpuReport gpu;
  gpu::NvmlReport nvml;
  std::optional<BuildAdvice> build;
  std::vector<Advice> advice;
  std::vector<LlamaServerBinary> llama_servers;
  BandwidthCheck bandwidth;
  std::vector<std::string> errors;  // a /proc file that could not be read or parsed

  // "GB10 (integrated, unified memory)", "discrete GPU" or "no GPU".
  std::string machine_class() const;
  // True when the first device is a GB10.
  bool is_gb10() const;
};

struct ProbeInputs {
  const platform::Sysroot* sysroot = nullptr;
  const platform::Environment* env = nullptr;
  gpu::GpuBackend* gpu = nullptr;
  std::optional<std::string> llama_server;  // --llama-server
  bool find_llama_servers = true;
  std::string fallback_arch;  // uname's machine, used when the sysroot does not say
  std::string now_iso8601;    // the timestamp to record
  std::uint64_t reserve_bytes = plan::kDefaultReserveBytes;         // --reserve (as launch)
  std::uint64_t gpu_reserve_bytes = plan::kDefaultGpuReserveBytes;  // --gpu-reserve
};

// The budgets of `facts` (memory budget, GPU report, NVML) with these reserves.
PlanBudgets plan_budgets(const ProbeResult& facts, std::uint64_t reserve,
                         std::uint64_t gpu_reserve);

// Gathers the facts and derives the advice. Never throws for machine state.
ProbeResult run_probe(const ProbeInputs& inputs);

// The advice for a set of facts (exposed for tests): K11 build line and GGML_NATIVE, K2
// unified-memory variable, K3 nvidia-smi, K3/K19 memory budget, K19 mmap loading.
std::vector<Advice> derive_advice(const ProbeResult& facts, const platform::Environment& env);

}  // namespace gb10tune::probe
