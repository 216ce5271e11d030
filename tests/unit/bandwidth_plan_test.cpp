#include "gb10tune/bench/bandwidth_plan.hpp"

#include <gtest/gtest.h>

#include "support/fake_gpu.hpp"
#include "support/units.hpp"

namespace gb10tune::bench {
namespace {

using kernels::Allocator;
using kernels::Operation;

using testing::kGiB;
constexpr std::uint64_t kPlenty = 100 * kGiB;

const PlannedCase* find(const BandwidthPlan& plan, Allocator a, Operation o) {
  for (const PlannedCase& c : plan.cases) {
    if (c.spec.allocator == a && c.spec.operation == o) {
      return &c;
    }
  }
  return nullptr;
}

TEST(BandwidthPlan, FullPlanOnGb10RunsEveryPath) {
  const auto plan = plan_bandwidth(testing::gb10_device(), {}, kPlenty);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->buffer_bytes, kGiB);
  // 7 allocators x (read, write, copy) + the memcpy reference.
  EXPECT_EQ(plan->cases.size(), 22u);
  for (const PlannedCase& c : plan->cases) {
    EXPECT_TRUE(c.waived.empty()) << kernels::to_string(c.spec.allocator) << ": " << c.waived;
    EXPECT_EQ(c.spec.samples, 10);
    EXPECT_EQ(c.spec.warmup_runs, 3);
    EXPECT_TRUE(c.spec.steady_warmup);  // at least 3 untimed runs, then until steady
  }
  // On a unified-memory GPU even cudaMalloc memory comes out of MemAvailable.
  EXPECT_EQ(find(*plan, Allocator::device, Operation::copy)->host_bytes, 2 * kGiB);
  EXPECT_EQ(find(*plan, Allocator::device, Operation::memcpy_d2d)->host_bytes, 2 * kGiB);
  EXPECT_EQ(find(*plan, Allocator::managed, Operation::memcpy_d2d), nullptr);
  EXPECT_EQ(plan->scaling_bytes, kGiB / 2);
  EXPECT_TRUE(plan->sweep_bytes.empty());
}

TEST(BandwidthPlan, PageableIsWaivedWithoutPageableMemoryAccess) {
  const auto plan = plan_bandwidth(testing::h200_device(), {}, kPlenty);
  ASSERT_TRUE(plan);
  const PlannedCase* pageable = find(*plan, Allocator::pageable_malloc, Operation::read);
  ASSERT_NE(pageable, nullptr);
  EXPECT_EQ(pageable->waived,
            "pageable memory is not GPU-accessible here (pageableMemoryAccess = 0)");
  // Discrete: cudaMalloc memory is not host memory.
  EXPECT_EQ(find(*plan, Allocator::device, Operation::read)->host_bytes, 0u);
  EXPECT_TRUE(find(*plan, Allocator::managed, Operation::read)->waived.empty());
}

TEST(BandwidthPlan, ManagedWithoutConcurrentAccessWaivesPrefetchAndAdvise) {
  gpu::GpuDevice device = testing::rtx4090_device();
  device.concurrent_managed_access = false;
  const auto plan = plan_bandwidth(device, {}, kPlenty);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(find(*plan, Allocator::managed, Operation::read)->waived.empty());
  EXPECT_NE(find(*plan, Allocator::managed_prefetch, Operation::read)
                ->waived.find("concurrentManagedAccess"),
            std::string::npos);
}

TEST(BandwidthPlan, HostBuffersNeverExceedMemAvailableMinusReserve) {
  BandwidthOptions options;
  options.reserve_bytes = 12'000'000'000ull;
  // A running server left 13.5 GB: 1.5 GB usable, enough for one 1 GiB buffer, not two.
  const auto plan = plan_bandwidth(testing::gb10_device(), options, 13'500'000'000ull);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->host_budget_bytes, 1'500'000'000ull);
  EXPECT_TRUE(find(*plan, Allocator::managed, Operation::read)->waived.empty());
  const std::string& copy = find(*plan, Allocator::managed, Operation::copy)->waived;
  EXPECT_NE(copy.find("needs 2.0 GiB of host memory"), std::string::npos) << copy;
  EXPECT_NE(copy.find("--size"), std::string::npos);
  for (const PlannedCase& c : plan->cases) {
    if (c.waived.empty()) {
      EXPECT_LE(c.host_bytes, plan->host_budget_bytes);
    }
  }
}

TEST(BandwidthPlan, NothingLeftAfterTheReserveWaivesAllHostCases) {
  const auto plan = plan_bandwidth(testing::h200_device(), {}, 4'000'000'000ull);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->host_budget_bytes, 0u);
  EXPECT_TRUE(find(*plan, Allocator::device, Operation::read)->waived.empty());
  EXPECT_FALSE(find(*plan, Allocator::pinned_host, Operation::read)->waived.empty());
  const auto unknown = plan_bandwidth(testing::h200_device(), {}, std::nullopt);
  EXPECT_NE(find(*unknown, Allocator::managed, Operation::read)->waived.find("MemAvailable"),
            std::string::npos);
}

TEST(BandwidthPlan, QuickIsASmallSubset) {
  BandwidthOptions options;
  options.quick = true;
  const auto plan = plan_bandwidth(testing::h200_device(), options, kPlenty);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->cases.size(), 5u);
  EXPECT_NE(find(*plan, Allocator::device, Operation::read), nullptr);
  EXPECT_NE(find(*plan, Allocator::device, Operation::copy), nullptr);
  EXPECT_NE(find(*plan, Allocator::device, Operation::memcpy_d2d), nullptr);
  EXPECT_NE(find(*plan, Allocator::managed, Operation::read), nullptr);
  EXPECT_NE(find(*plan, Allocator::pinned_host, Operation::read), nullptr);
  EXPECT_EQ(plan->cases.front().spec.samples, 5);
  EXPECT_EQ(plan->cases.front().spec.warmup_runs, 2);
  EXPECT_TRUE(plan->cases.front().spec.steady_warmup);
}

// The roofline takes the quick bench's device read as its ceiling: it must read what the full
// bench reads. On an H200 a 256 MiB read is 4-10% slower than the full bench's 1 GiB one.
TEST(BandwidthPlan, QuickMeasuresTheSameBuffersAsTheFullBench) {
  gpu::GpuDevice huge_l2 = testing::h200_device();
  huge_l2.l2_bytes = 300u << 20;
  for (const gpu::GpuDevice& device :
       {testing::h200_device(), testing::gb10_device(), testing::rtx4090_device(), huge_l2}) {
    BandwidthOptions quick;
    quick.quick = true;
    const auto fast = plan_bandwidth(device, quick, kPlenty);
    const auto full = plan_bandwidth(device, {}, kPlenty);
    ASSERT_TRUE(fast && full);
    EXPECT_EQ(fast->buffer_bytes, full->buffer_bytes) << device.name;
    EXPECT_GE(fast->buffer_bytes, kGiB) << device.name;
    EXPECT_EQ(fast->scaling_bytes, full->scaling_bytes) << device.name;
    for (const PlannedCase& c : fast->cases) {
      if (c.spec.allocator != Allocator::pinned_host) {
        EXPECT_EQ(c.spec.bytes, full->buffer_bytes) << device.name;
      }
    }
  }
}

// The one exception: pinned host memory (pinning 1 GiB took ~0.8 s of 1.2 s on an H200), in
// buffers still at least 4x the L2, and said in a note.
TEST(BandwidthPlan, QuickReadsPinnedMemoryInSmallerBuffers) {
  BandwidthOptions quick;
  quick.quick = true;
  const auto plan = plan_bandwidth(testing::h200_device(), quick, kPlenty);
  ASSERT_TRUE(plan);
  const PlannedCase* pinned = find(*plan, Allocator::pinned_host, Operation::read);
  ASSERT_NE(pinned, nullptr);
  EXPECT_EQ(pinned->spec.bytes, 256u << 20);
  EXPECT_EQ(pinned->host_bytes, 256u << 20);
  ASSERT_EQ(plan->notes.size(), 1u);
  EXPECT_EQ(plan->notes[0],
            "--quick reads pinned_host in 256.0 MiB buffers: pinning 1.0 GiB would take most of "
            "the quick bench's time");

  gpu::GpuDevice huge_l2 = testing::h200_device();
  huge_l2.l2_bytes = 100u << 20;  // 4x is 400 MiB
  const auto floor = plan_bandwidth(huge_l2, quick, kPlenty);
  ASSERT_TRUE(floor);
  EXPECT_EQ(find(*floor, Allocator::pinned_host, Operation::read)->spec.bytes, 400u << 20);

  // An explicit --size is taken for every case; so is the full bench's default.
  quick.buffer_bytes = kGiB;
  const auto sized = plan_bandwidth(testing::h200_device(), quick, kPlenty);
  ASSERT_TRUE(sized);
  EXPECT_EQ(find(*sized, Allocator::pinned_host, Operation::read)->spec.bytes, kGiB);
  EXPECT_TRUE(sized->notes.empty());
  const auto full = plan_bandwidth(testing::h200_device(), {}, kPlenty);
  EXPECT_EQ(find(*full, Allocator::pinned_host, Operation::read)->spec.bytes, kGiB);
}

// A device-memory sample holds back-to-back launches worth >= 4 GiB of traffic (at most 16):
// single 0.25 ms launches on an H200 vary by ~1%. Host-backed cases keep one launch per sample.
TEST(BandwidthPlan, DeviceSamplesHoldSeveralLaunches) {
  const auto plan = plan_bandwidth(testing::h200_device(), {}, kPlenty);
  ASSERT_TRUE(plan);
  EXPECT_EQ(find(*plan, Allocator::device, Operation::read)->spec.launches_per_sample, 4);
  EXPECT_EQ(find(*plan, Allocator::device, Operation::write)->spec.launches_per_sample, 4);
  EXPECT_EQ(find(*plan, Allocator::device, Operation::copy)->spec.launches_per_sample, 2);
  EXPECT_EQ(find(*plan, Allocator::device, Operation::memcpy_d2d)->spec.launches_per_sample, 2);
  EXPECT_EQ(find(*plan, Allocator::managed, Operation::read)->spec.launches_per_sample, 1);
  EXPECT_EQ(find(*plan, Allocator::pinned_host, Operation::copy)->spec.launches_per_sample, 1);
  BandwidthOptions small;
  small.buffer_bytes = 8u << 20;
  const auto tiny = plan_bandwidth(testing::h200_device(), small, kPlenty);
  ASSERT_TRUE(tiny);
  EXPECT_EQ(find(*tiny, Allocator::device, Operation::read)->spec.launches_per_sample, 16);
  small.buffer_bytes = 8 * kGiB;
  const auto big = plan_bandwidth(testing::h200_device(), small, kPlenty);
  ASSERT_TRUE(big);
  EXPECT_EQ(find(*big, Allocator::device, Operation::copy)->spec.launches_per_sample, 1);
}

TEST(BandwidthPlan, WarmupOptionAsksForAFixedCount) {
  BandwidthOptions options;
  options.warmup = 7;
  const auto plan = plan_bandwidth(testing::h200_device(), options, kPlenty);
  ASSERT_TRUE(plan);
  for (const PlannedCase& c : plan->cases) {
    EXPECT_EQ(c.spec.warmup_runs, 7);
    EXPECT_FALSE(c.spec.steady_warmup);
  }
}

TEST(BandwidthPlan, BufferIsAtLeastFourTimesL2) {
  gpu::GpuDevice device = testing::h200_device();
  device.l2_bytes = 300u << 20;  // a future GPU with a huge L2
  const auto plan = plan_bandwidth(device, {}, kPlenty);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->buffer_bytes, 1200u << 20);
  BandwidthOptions small;
  small.buffer_bytes = 64u << 20;
  const auto forced = plan_bandwidth(device, small, kPlenty);
  ASSERT_TRUE(forced);
  EXPECT_EQ(forced->buffer_bytes, 64u << 20);
  ASSERT_EQ(forced->notes.size(), 1u);
  EXPECT_NE(forced->notes[0].find("cache hits"), std::string::npos);
}

TEST(BandwidthPlan, FiltersSweepAndBadOptions) {
  BandwidthOptions options;
  options.allocators = {Allocator::device};
  options.operations = {Operation::read};
  options.sweep = true;
  options.buffer_bytes = 8u << 20;
  const auto plan = plan_bandwidth(testing::h200_device(), options, kPlenty);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->cases.size(), 1u);
  EXPECT_EQ(plan->sweep_bytes,
            (std::vector<std::uint64_t>{1u << 20, 2u << 20, 4u << 20, 8u << 20}));
  options.buffer_bytes = 100;
  EXPECT_FALSE(plan_bandwidth(testing::h200_device(), options, kPlenty));
  options.buffer_bytes = 0;
  options.samples = -1;
  EXPECT_FALSE(plan_bandwidth(testing::h200_device(), options, kPlenty));
}

}  // namespace
}  // namespace gb10tune::bench
