#include "gb10tune/bench/bandwidth_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "gb10tune/kernels/warmup.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::bench {

using kernels::Allocator;
using kernels::CaseStatus;
using kernels::Operation;

namespace {

// A figure more than this far above the nominal peak cannot be DRAM traffic.
constexpr double kAbovePeakTolerance = 1.02;
// A device-memory figure below this share of the peak means something is wrong.
constexpr double kFarBelowPeak = 0.40;
// More spread than this between samples makes the median less trustworthy.
constexpr double kNoisyCv = 0.10;
// Accepted time ratio of a full-size read against a half-size one.
constexpr double kScalingLow = 1.6;
constexpr double kScalingHigh = 2.5;
// Each sweep sample moves at least this much traffic (bounded by kMaxSweepLaunches).
constexpr std::uint64_t kSweepTrafficBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kMaxSweepLaunches = 1024;

bool cancelled(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

const CaseOutcome* find_case(const BandwidthRun& run, Allocator allocator, Operation operation) {
  for (const CaseOutcome& outcome : run.cases) {
    if (outcome.planned.spec.allocator == allocator &&
        outcome.planned.spec.operation == operation && outcome.result.status == CaseStatus::ok) {
      return &outcome;
    }
  }
  return nullptr;
}

kernels::CaseResult waived_result(const PlannedCase& planned) {
  kernels::CaseResult result;
  result.status = CaseStatus::waived;
  result.reason = planned.waived;
  return result;
}

kernels::CaseSpec device_read(const BandwidthInputs& inputs, std::uint64_t bytes) {
  kernels::CaseSpec spec;
  spec.allocator = Allocator::device;
  spec.operation = Operation::read;
  spec.bytes = bytes;
  spec.device = inputs.device.index;
  spec.samples = 5;
  spec.warmup_runs = 2;
  spec.steady_warmup = true;
  spec.cancel = inputs.cancel;
  return spec;
}

ScalingCheck check_scaling(const BandwidthInputs& inputs, const BandwidthRun& run) {
  ScalingCheck check;
  const CaseOutcome* full = find_case(run, Allocator::device, Operation::read);
  if (full == nullptr || inputs.plan.scaling_bytes == 0) {
    return check;
  }
  kernels::CaseSpec spec = device_read(inputs, inputs.plan.scaling_bytes);
  spec.samples = full->planned.spec.samples;
  spec.warmup_runs = full->planned.spec.warmup_runs;
  spec.steady_warmup = full->planned.spec.steady_warmup;
  spec.launches_per_sample = full->planned.spec.launches_per_sample;
  const kernels::CaseResult half = inputs.runner(spec);
  check.ran = true;
  check.half_bytes = spec.bytes;
  if (half.status != CaseStatus::ok) {
    check.detail = fmt::format("the half-size read did not run: {}", half.reason);
    return check;
  }
  // Times of one launch (a sample may hold several, the same number in both).
  const double launches = std::max(1, spec.launches_per_sample);
  check.half_seconds = summarize(half.sample_seconds).median / launches;
  check.full_seconds = full->seconds.median / launches;
  check.ratio = check.half_seconds > 0 ? check.full_seconds / check.half_seconds : 0;
  const double size_ratio =
      static_cast<double>(full->planned.spec.bytes) / static_cast<double>(spec.bytes);
  check.ok = check.ratio >= kScalingLow && check.ratio <= kScalingHigh;
  check.detail =
      fmt::format("{} read in {:.3f} ms, {} in {:.3f} ms: x{:.2f} for x{:.1f} the bytes",
                  format_bytes(full->planned.spec.bytes), check.full_seconds * 1e3,
                  format_bytes(spec.bytes), check.half_seconds * 1e3, check.ratio, size_ratio);
  if (!check.ok) {
    check.detail += fmt::format(
        " (expected x{:.1f} to x{:.1f}: the timing does not measure "
        "memory traffic)",
        kScalingLow, kScalingHigh);
  }
  return check;
}

std::vector<SweepPoint> run_sweep(const BandwidthInputs& inputs) {
  std::vector<SweepPoint> points;
  for (std::uint64_t bytes : inputs.plan.sweep_bytes) {
    if (cancelled(inputs.cancel)) {
      break;
    }
    kernels::CaseSpec spec = device_read(inputs, bytes);
    // Small buffers are read many times per timed run, so that launch overhead does not hide
    // the cache: at least kSweepTrafficBytes of traffic per sample.
    spec.launches_per_sample = static_cast<int>(
        std::min<std::uint64_t>(kMaxSweepLaunches, (kSweepTrafficBytes + bytes - 1) / bytes));
    const kernels::CaseResult result = inputs.runner(spec);
    SweepPoint point;
    point.bytes = bytes;
    point.ok = result.status == CaseStatus::ok;
    if (point.ok) {
      const double median = summarize(result.sample_seconds).median;
      point.gbps =
          median > 0 ? static_cast<double>(result.traffic_bytes_per_sample) / median / 1e9 : 0;
    } else {
      point.error = result.reason;
    }
    points.push_back(point);
  }
  return points;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void judge_case(CaseOutcome& outcome, double peak_bytes_per_second, double device_read_gbps) {
  const kernels::CaseResult& result = outcome.result;
  if (result.status != CaseStatus::ok && result.status != CaseStatus::cancelled) {
    return;
  }
  outcome.seconds = summarize(result.sample_seconds);
  std::vector<double> rates;
  for (double seconds : result.sample_seconds) {
    if (seconds > 0) {
      rates.push_back(static_cast<double>(result.traffic_bytes_per_sample) / seconds / 1e9);
    }
  }
  outcome.gbps = summarize(rates);
  // The median rate is the rate of the median time (one traffic figure for all samples).
  if (outcome.seconds.median > 0) {
    outcome.gbps.median =
        static_cast<double>(result.traffic_bytes_per_sample) / outcome.seconds.median / 1e9;
  }
  if (result.status != CaseStatus::ok) {
    return;
  }
  const double peak_gbps = peak_bytes_per_second / 1e9;
  if (peak_gbps > 0) {
    outcome.percent_of_peak = 100.0 * outcome.gbps.median / peak_gbps;
    // Traffic that never leaves the GPU can be checked against its memory's peak.
    const bool device_memory = outcome.planned.spec.allocator == Allocator::device;
    if (outcome.gbps.max > peak_gbps * kAbovePeakTolerance && device_memory) {
      outcome.flags.push_back(fmt::format(
          "above the nominal peak ({:.0f} GB/s > {:.0f} GB/s): cache hits or a timing error",
          outcome.gbps.max, peak_gbps));
    }
    if (device_memory && outcome.gbps.median < peak_gbps * kFarBelowPeak) {
      outcome.flags.push_back(fmt::format("far below the nominal peak ({:.0f}% of {:.0f} GB/s)",
                                          outcome.percent_of_peak, peak_gbps));
    }
  }
  if (device_read_gbps > 0) {
    outcome.percent_of_device_read = 100.0 * outcome.gbps.median / device_read_gbps;
  }
  if (outcome.seconds.cv > kNoisyCv) {
    outcome.flags.push_back(
        fmt::format("noisy: the samples vary by {:.0f}% (CV)", 100.0 * outcome.seconds.cv));
  }
  if (!result.validated) {
    outcome.flags.push_back("not validated: " + result.validation);
  }
  if (outcome.planned.spec.steady_warmup) {
    const std::string unsettled = kernels::describe_unsettled(
        result.warmup_seconds, kernels::steady_warmup_rule(outcome.planned.spec.warmup_runs));
    if (!unsettled.empty()) {
      outcome.flags.push_back("warm-up did not settle: " + unsettled);
    }
  }
}

std::string bandwidth_verdict(const BandwidthRun& run) {
  const CaseOutcome* device = find_case(run, Allocator::device, Operation::read);
  const CaseOutcome* managed = find_case(run, Allocator::managed, Operation::read);
  if (device == nullptr || managed == nullptr || managed->gbps.median <= 0) {
    return "no verdict: the cudaMalloc and managed reads did not both run";
  }
  const std::string contended =
      run.server_pids.empty() ? "" : " (contended: a llama-server is running)";
  const double faster = 100.0 * (device->gbps.median / managed->gbps.median - 1.0);
  if (faster >= 10.0) {
    return fmt::format(
        "device path is {:.0f}% faster than managed{}: keep "
        "GGML_CUDA_ENABLE_UNIFIED_MEMORY out of the server's environment",
        faster, contended);
  }
  if (faster <= -10.0) {
    return fmt::format(
        "managed memory reads {:.0f}% faster than cudaMalloc memory here{}: "
        "unusual; measure again before acting on it",
        -faster, contended);
  }
  return fmt::format(
      "managed memory reads within {:.0f}% of cudaMalloc memory here{} (after "
      "migration to the GPU); on GB10 the gap is ~32% (K1)",
      std::abs(faster), contended);
}

BandwidthRun run_bandwidth(const BandwidthInputs& inputs) {
  const auto run_start = std::chrono::steady_clock::now();
  BandwidthRun run;
  run.device = inputs.device;
  run.plan = inputs.plan;
  run.server_pids = inputs.server_pids;
  if (inputs.peak_override) {
    run.peak_bytes_per_second = *inputs.peak_override;
    run.peak_source = "--peak";
  } else {
    run.peak_bytes_per_second = gpu::nominal_bandwidth(inputs.device);
    run.peak_source = gpu::nominal_bandwidth_source(inputs.device);
  }

  const int total = static_cast<int>(inputs.plan.cases.size());
  int index = 0;
  for (const PlannedCase& planned : inputs.plan.cases) {
    ++index;
    CaseOutcome outcome;
    outcome.planned = planned;
    if (run.interrupted) {
      break;
    }
    if (!planned.waived.empty()) {
      outcome.result = waived_result(planned);
    } else {
      kernels::CaseSpec spec = planned.spec;
      spec.cancel = inputs.cancel;
      const auto case_start = std::chrono::steady_clock::now();
      outcome.result = inputs.runner(spec);
      outcome.wall_seconds = seconds_since(case_start);
      if (outcome.result.status == CaseStatus::cancelled || cancelled(inputs.cancel)) {
        run.interrupted = true;
      }
    }
    judge_case(outcome, run.peak_bytes_per_second, 0);
    run.cases.push_back(std::move(outcome));
    if (inputs.progress) {
      inputs.progress(index, total, run.cases.back());
    }
  }

  // Percentages of the cudaMalloc read need its figure: fill them in once all ran.
  if (const CaseOutcome* device = find_case(run, Allocator::device, Operation::read)) {
    const double reference = device->gbps.median;
    for (CaseOutcome& outcome : run.cases) {
      if (outcome.result.status == CaseStatus::ok && reference > 0) {
        outcome.percent_of_device_read = 100.0 * outcome.gbps.median / reference;
      }
    }
  }
  if (!run.interrupted) {
    run.scaling = check_scaling(inputs, run);
    run.sweep = run_sweep(inputs);
    run.interrupted = cancelled(inputs.cancel);
  }
  for (const CaseOutcome& outcome : run.cases) {
    if (outcome.result.status == CaseStatus::failed ||
        (outcome.result.status == CaseStatus::ok && !outcome.result.validated)) {
      run.all_valid = false;
    }
  }
  if (run.scaling.ran && !run.scaling.ok) {
    run.all_valid = false;
  }
  run.verdict = bandwidth_verdict(run);
  run.wall_seconds = seconds_since(run_start);
  return run;
}

}  // namespace gb10tune::bench
