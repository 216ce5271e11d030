// Running a bandwidth plan and judging the figures: statistics per case, % of the nominal
// peak and of the cudaMalloc read, validation (checksums, time scaling with size, figures
// above the peak or far below it) and the one-line verdict about the allocation paths (K1, K2).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/bench/bandwidth_plan.hpp"
#include "gb10tune/bench/statistics.hpp"
#include "gb10tune/gpu/gpu_info.hpp"

namespace gb10tune::bench {

// Runs one case on the GPU (kernels::run_case in the product, a fake in tests).
using CaseRunner = std::function<kernels::CaseResult(const kernels::CaseSpec&)>;

struct CaseOutcome {
  PlannedCase planned;
  kernels::CaseResult result;         // status waived (with the plan's reason) when never run
  SampleStats seconds;                // of result.sample_seconds
  SampleStats gbps;                   // per-sample bandwidth, 10^9 bytes/s of read+write traffic
  double percent_of_peak = 0;         // median vs the nominal peak; 0 when the peak is unknown
  double percent_of_device_read = 0;  // median vs the cudaMalloc read median
  std::vector<std::string> flags;     // validation warnings about this figure
  double wall_seconds = 0;            // the whole case: allocation, fill, runs, validation
};

// The time of a full-size device read against a half-size one: should be ~2x.
struct ScalingCheck {
  bool ran = false;
  std::uint64_t half_bytes = 0;
  double half_seconds = 0;  // medians, per launch
  double full_seconds = 0;
  double ratio = 0;
  bool ok = false;
  std::string detail;
};

struct SweepPoint {
  std::uint64_t bytes = 0;
  double gbps = 0;  // median
  bool ok = false;
  std::string error;
};

struct BandwidthRun {
  gpu::GpuDevice device;
  double peak_bytes_per_second = 0;  // 0 when unknown
  std::string peak_source;           // "table", "--peak", "memory clock x bus width", "unknown"
  BandwidthPlan plan;
  std::vector<CaseOutcome> cases;
  ScalingCheck scaling;
  std::vector<SweepPoint> sweep;
  std::vector<int> server_pids;  // llama-server processes running: results are contended
  std::string verdict;
  bool interrupted = false;
  bool all_valid = true;    // no case failed and every validation passed
  double wall_seconds = 0;  // the whole run, scaling check and sweep included
};

// Called after every case: index (from 1), total, and the outcome.
using Progress = std::function<void(int index, int total, const CaseOutcome& outcome)>;

struct BandwidthInputs {
  gpu::GpuDevice device;
  BandwidthPlan plan;
  std::optional<double> peak_override;  // --peak, bytes/s
  std::vector<int> server_pids;
  CaseRunner runner;
  Progress progress;                          // may be empty
  const std::atomic<bool>* cancel = nullptr;  // Ctrl-C
};

// Runs every planned case (waived ones are recorded, not run), then the scaling check and
// the sweep, and judges the figures.
BandwidthRun run_bandwidth(const BandwidthInputs& inputs);

// Derives stats, percentages and flags of a finished case (exposed for tests).
void judge_case(CaseOutcome& outcome, double peak_bytes_per_second, double device_read_gbps);

// The one-line verdict comparing the device path with managed memory (K1, K2).
std::string bandwidth_verdict(const BandwidthRun& run);

}  // namespace gb10tune::bench
