// The whole bandwidth job from the outside in: is there a GPU, how much memory may be taken,
// is a llama-server running (contended results), then plan and run.
#pragma once

#include <atomic>
#include <optional>

#include "gb10tune/bench/bandwidth_bench.hpp"
#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::bench {

struct BandwidthEnvironment {
  const platform::Sysroot* sysroot = nullptr;  // /proc/meminfo and the process table
  gpu::GpuBackend* gpu = nullptr;
  CaseRunner runner;
  Progress progress;                          // may be empty
  const std::atomic<bool>* cancel = nullptr;  // Ctrl-C
};

// Measures. Errors carry their exit code: no usable GPU → ExitCode::no_gpu (one line naming
// the reason), bad options or device index → ExitCode::usage.
Expected<BandwidthRun> measure_bandwidth(const BandwidthOptions& options,
                                         std::optional<double> peak_override,
                                         const BandwidthEnvironment& environment);

}  // namespace gb10tune::bench
