#include "gb10tune/bench/bandwidth_bench.hpp"

#include <gtest/gtest.h>

#include "gb10tune/kernels/warmup.hpp"
#include "support/fake_bandwidth.hpp"
#include "support/fake_gpu.hpp"

namespace gb10tune::bench {
namespace {

using kernels::Allocator;
using kernels::CaseStatus;
using kernels::Operation;

BandwidthRun run_with(testing::FakeBandwidth& fake, const gpu::GpuDevice& device,
                      BandwidthOptions options = {}) {
  auto plan = plan_bandwidth(device, options, std::uint64_t{100} << 30);
  EXPECT_TRUE(plan);
  BandwidthInputs inputs;
  inputs.device = device;
  inputs.plan = *plan;
  inputs.runner = [&fake](const kernels::CaseSpec& spec) { return fake(spec); };
  return run_bandwidth(inputs);
}

const CaseOutcome& find(const BandwidthRun& run, Allocator a, Operation o) {
  for (const CaseOutcome& c : run.cases) {
    if (c.planned.spec.allocator == a && c.planned.spec.operation == o) {
      return c;
    }
  }
  throw std::runtime_error("case not found");
}

TEST(BandwidthBench, Gb10FiguresGiveTheK1Verdict) {
  testing::FakeBandwidth fake;
  const BandwidthRun run = run_with(fake, testing::gb10_device());
  EXPECT_TRUE(run.all_valid);
  EXPECT_EQ(run.peak_source, "table");
  const CaseOutcome& device = find(run, Allocator::device, Operation::read);
  EXPECT_NEAR(device.gbps.median, 237.0, 0.01);
  EXPECT_NEAR(device.percent_of_peak, 100.0 * 237 / 273, 0.01);
  EXPECT_NEAR(device.percent_of_device_read, 100.0, 1e-9);
  const CaseOutcome& managed = find(run, Allocator::managed, Operation::read);
  EXPECT_NEAR(managed.percent_of_device_read, 100.0 * 162 / 237, 0.01);
  EXPECT_EQ(run.verdict,
            "device path is 46% faster than managed: keep GGML_CUDA_ENABLE_UNIFIED_MEMORY out of "
            "the server's environment");
  EXPECT_TRUE(run.scaling.ran);
  EXPECT_TRUE(run.scaling.ok) << run.scaling.detail;
  EXPECT_NEAR(run.scaling.ratio, 2.0, 0.05);
}

TEST(BandwidthBench, CopyTrafficCountsReadAndWrite) {
  testing::FakeBandwidth fake;
  const BandwidthRun run = run_with(fake, testing::gb10_device());
  const CaseOutcome& copy = find(run, Allocator::device, Operation::copy);
  // Two 1 GiB buffers, read once and written once, in each of the sample's 2 launches.
  EXPECT_EQ(copy.planned.spec.launches_per_sample, 2);
  EXPECT_EQ(copy.result.traffic_bytes_per_sample, 4ull << 30);
  EXPECT_NEAR(copy.gbps.median, 237.0, 0.01);
  // The scaling check times one launch of each size: 1 GiB against 512 MiB at 237 GB/s.
  EXPECT_NEAR(run.scaling.full_seconds, double(1ull << 30) / 237e9, 1e-6);
  EXPECT_NEAR(run.scaling.half_seconds, double(1ull << 29) / 237e9, 1e-6);
}

TEST(BandwidthBench, WaivedCasesAreRecordedNotRun) {
  testing::FakeBandwidth fake;
  const BandwidthRun run = run_with(fake, testing::h200_device());
  const CaseOutcome& pageable = find(run, Allocator::pageable_mmap, Operation::copy);
  EXPECT_EQ(pageable.result.status, CaseStatus::waived);
  for (const kernels::CaseSpec& spec : fake.calls) {
    EXPECT_NE(spec.allocator, Allocator::pageable_mmap);
  }
  EXPECT_TRUE(run.all_valid);  // a waiver is not a failure
}

TEST(BandwidthBench, FiguresAbovePeakAndFarBelowAreFlagged) {
  testing::FakeBandwidth fake;
  fake.gbps[Allocator::device] = 5000;  // an H200 cannot read 5 TB/s from HBM
  const BandwidthRun above = run_with(fake, testing::h200_device());
  const auto& flags = find(above, Allocator::device, Operation::read).flags;
  ASSERT_FALSE(flags.empty());
  EXPECT_NE(flags[0].find("above the nominal peak"), std::string::npos);

  fake.gbps[Allocator::device] = 900;
  const BandwidthRun below = run_with(fake, testing::h200_device());
  const auto& low = find(below, Allocator::device, Operation::read).flags;
  ASSERT_FALSE(low.empty());
  EXPECT_NE(low[0].find("far below"), std::string::npos);
}

TEST(BandwidthBench, NoisySamplesAreFlagged) {
  testing::FakeBandwidth fake;
  fake.jitter = 0.3;
  const BandwidthRun run = run_with(fake, testing::gb10_device());
  const auto& flags = find(run, Allocator::device, Operation::read).flags;
  ASSERT_FALSE(flags.empty());
  EXPECT_NE(flags.back().find("noisy"), std::string::npos);
}

TEST(BandwidthBench, AWarmupThatNeverSettledIsFlagged) {
  testing::FakeBandwidth fake;
  const kernels::WarmupRule rule = kernels::steady_warmup_rule(3);
  for (int i = 0; i < rule.max_runs; ++i) {
    fake.warmup_seconds.push_back(i % 2 == 0 ? 0.0010 : 0.0011);
  }
  const BandwidthRun run = run_with(fake, testing::gb10_device());
  const CaseOutcome& read = find(run, Allocator::device, Operation::read);
  ASSERT_EQ(read.flags.size(), 1u);
  EXPECT_EQ(read.flags[0],
            "warm-up did not settle: the last 3 of 100 untimed runs still vary by 10.0% "
            "(settled means within 1%)");
  EXPECT_TRUE(run.all_valid);  // a warning about the figure, not a failed case

  // The same runs under a fixed --warmup are what was asked for: no flag.
  BandwidthOptions fixed;
  fixed.warmup = 100;
  const BandwidthRun asked = run_with(fake, testing::gb10_device(), fixed);
  EXPECT_TRUE(find(asked, Allocator::device, Operation::read).flags.empty());

  // A warm-up that settled: no flag either.
  fake.warmup_seconds.assign(static_cast<std::size_t>(rule.min_seconds / 0.001) + 3, 0.001);
  const BandwidthRun settled = run_with(fake, testing::gb10_device());
  EXPECT_TRUE(find(settled, Allocator::device, Operation::read).flags.empty());
}

TEST(BandwidthBench, ValidationFailureFailsTheRun) {
  testing::FakeBandwidth fake;
  fake.fail_validation = true;
  const BandwidthRun run = run_with(fake, testing::gb10_device());
  EXPECT_FALSE(run.all_valid);
  EXPECT_EQ(find(run, Allocator::device, Operation::read).result.status, CaseStatus::failed);
  EXPECT_EQ(run.verdict, "no verdict: the cudaMalloc and managed reads did not both run");
}

TEST(BandwidthBench, TimeThatDoesNotScaleWithSizeFailsTheScalingCheck) {
  testing::FakeBandwidth fake;
  fake.ignore_size = true;
  const BandwidthRun run = run_with(fake, testing::gb10_device());
  EXPECT_TRUE(run.scaling.ran);
  EXPECT_FALSE(run.scaling.ok);
  EXPECT_FALSE(run.all_valid);
  EXPECT_NE(run.scaling.detail.find("expected x1.6 to x2.5"), std::string::npos);
}

TEST(BandwidthBench, CancelStopsAfterTheCurrentCase) {
  testing::FakeBandwidth fake;
  std::atomic<bool> cancel{false};
  auto plan = plan_bandwidth(testing::gb10_device(), {}, std::uint64_t{100} << 30);
  BandwidthInputs inputs;
  inputs.device = testing::gb10_device();
  inputs.plan = *plan;
  inputs.cancel = &cancel;
  inputs.runner = [&](const kernels::CaseSpec& spec) {
    if (fake.calls.size() == 2) {
      cancel = true;  // Ctrl-C during the third case
    }
    return fake(spec);
  };
  const BandwidthRun run = run_bandwidth(inputs);
  EXPECT_TRUE(run.interrupted);
  EXPECT_EQ(fake.calls.size(), 3u);
  EXPECT_EQ(run.cases.size(), 3u);
  EXPECT_FALSE(run.scaling.ran);
}

TEST(BandwidthBench, ContendedAndSimilarPathsVerdicts) {
  testing::FakeBandwidth fake;
  fake.gbps[Allocator::managed] = 4300;
  fake.gbps[Allocator::device] = 4400;
  auto plan = plan_bandwidth(testing::h200_device(), {}, std::uint64_t{100} << 30);
  BandwidthInputs inputs;
  inputs.device = testing::h200_device();
  inputs.plan = *plan;
  inputs.server_pids = {4242};
  inputs.runner = [&fake](const kernels::CaseSpec& spec) { return fake(spec); };
  const BandwidthRun run = run_bandwidth(inputs);
  EXPECT_NE(run.verdict.find("within 2%"), std::string::npos) << run.verdict;
  EXPECT_NE(run.verdict.find("contended"), std::string::npos);
}

TEST(BandwidthBench, PeakOverrideAndSweep) {
  testing::FakeBandwidth fake;
  BandwidthOptions options;
  options.sweep = true;
  options.buffer_bytes = 4u << 20;
  auto plan = plan_bandwidth(testing::h200_device(), options, std::uint64_t{100} << 30);
  BandwidthInputs inputs;
  inputs.device = testing::h200_device();
  inputs.plan = *plan;
  inputs.peak_override = 250e9;
  inputs.runner = [&fake](const kernels::CaseSpec& spec) { return fake(spec); };
  const BandwidthRun run = run_bandwidth(inputs);
  EXPECT_EQ(run.peak_source, "--peak");
  EXPECT_NEAR(find(run, Allocator::device, Operation::read).percent_of_peak, 94.8, 0.01);
  ASSERT_EQ(run.sweep.size(), 3u);
  EXPECT_EQ(run.sweep.back().bytes, 4u << 20);
  // Each sweep sample reads at least 1 GiB: small buffers are read many times per sample.
  ASSERT_GE(fake.calls.size(), 3u);
  const std::vector<kernels::CaseSpec> last_three(fake.calls.end() - 3, fake.calls.end());
  EXPECT_EQ(last_three[0].launches_per_sample, 1024);
  EXPECT_EQ(last_three[1].launches_per_sample, 512);
  EXPECT_EQ(last_three[2].launches_per_sample, 256);
  EXPECT_NEAR(run.sweep.back().gbps, 237.0, 0.01);
}

}  // namespace
}  // namespace gb10tune::bench
