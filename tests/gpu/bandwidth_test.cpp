// Tests of the bandwidth kernels (label `gpu`): GPU cases skip without CUDA or without a device
// (and fail instead with GB10TUNE_REQUIRE_GPU=1); the pattern arithmetic and the no-CUDA stub
// are checked everywhere.
#include "gb10tune/kernels/bandwidth.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "gb10tune/kernels/copy_path.hpp"
#include "gb10tune/kernels/warmup.hpp"
#include "support/gpu_gate.hpp"

namespace gb10tune::kernels {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Sum of the little-endian words of the pattern, one byte at a time (the definition).
std::uint64_t brute_force_checksum(std::uint64_t bytes, std::uint32_t seed) {
  std::uint64_t sum = 0;
  for (std::uint64_t b = 0; b < bytes; ++b) {
    const auto word = static_cast<std::uint32_t>(b / 4 + seed);
    const std::uint64_t byte = (word >> (8 * (b % 4))) & 0xffu;
    sum += byte << (8 * (b % 4));
  }
  return sum;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

CaseSpec make_spec(Allocator allocator, Operation operation, std::uint64_t bytes) {
  CaseSpec spec;
  spec.allocator = allocator;
  spec.operation = operation;
  spec.bytes = bytes;
  spec.warmup_runs = 1;
  spec.samples = 3;
  return spec;
}

std::string describe(const CaseResult& r) {
  return std::string(to_string(r.status)) + ": " + r.reason + " | " + r.validation;
}

TEST(KernelPatternChecksum, MatchesTheDefinitionForSmallSizesAndWrappingSeeds) {
  for (const std::uint32_t seed : {0u, 1u, 0x9e3779b9u, 0xfffffff0u, 0xffffffffu}) {
    for (std::uint64_t bytes = 0; bytes <= 80; ++bytes) {
      EXPECT_EQ(pattern_checksum(bytes, seed), brute_force_checksum(bytes, seed))
          << "bytes " << bytes << " seed " << seed;
    }
  }
}

TEST(KernelPatternChecksum, MatchesTheDefinitionAcrossTheWordWrap) {
  // 2^20 words starting 2^19 below the wrap of the 32-bit word value.
  const std::uint64_t bytes = 4 * kMiB + 3;
  const std::uint32_t seed = 0xfff80000u;
  EXPECT_EQ(pattern_checksum(bytes, seed), brute_force_checksum(bytes, seed));
}

TEST(KernelPatternChecksum, ChangesWithSizeAndSeed) {
  EXPECT_NE(pattern_checksum(1 * kMiB, 7), pattern_checksum(1 * kMiB - 4, 7));
  EXPECT_NE(pattern_checksum(1 * kMiB, 7), pattern_checksum(1 * kMiB, 8));
}

TEST(KernelNames, AreStableAndRoundTrip) {
  EXPECT_EQ(to_string(Allocator::managed_prefetch), "managed_prefetch");
  EXPECT_EQ(to_string(Operation::memcpy_d2d), "memcpy_d2d");
  EXPECT_EQ(to_string(CaseStatus::waived), "waived");
  for (const Allocator a : kAllAllocators)
    EXPECT_EQ(parse_allocator(to_string(a)), a);
  for (const Operation o : kAllOperations)
    EXPECT_EQ(parse_operation(to_string(o)), o);
  EXPECT_FALSE(parse_allocator("cudaMalloc").has_value());
}

TEST(KernelCopyPath, BulkNeedsSm90CodeAndTheSharedMemory) {
  // H100/H200: up to 227 KiB of shared memory per block.
  EXPECT_EQ(choose_copy_path(90, 227 * 1024 - 128), CopyPath::bulk_wide);
  // GB10-class (sm_12x): ~99 KiB per block.
  EXPECT_EQ(choose_copy_path(121, 99 * 1024 - 128), CopyPath::bulk_compact);
  // Exactly enough, and one byte short.
  EXPECT_EQ(choose_copy_path(90, bulk_shared_bytes(CopyPath::bulk_wide)), CopyPath::bulk_wide);
  EXPECT_EQ(choose_copy_path(90, bulk_shared_bytes(CopyPath::bulk_wide) - 1),
            CopyPath::bulk_compact);
  EXPECT_EQ(choose_copy_path(90, bulk_shared_bytes(CopyPath::bulk_compact) - 1), CopyPath::vector);
  // Code JIT-compiled from the compute_80 PTX has no bulk instructions, whatever the device.
  EXPECT_EQ(choose_copy_path(80, 227 * 1024), CopyPath::vector);
  EXPECT_EQ(choose_copy_path(0, 227 * 1024), CopyPath::vector);
}

TEST(KernelCopyPath, SharedMemoryIsStagesTimesChunk) {
  EXPECT_EQ(bulk_shared_bytes(CopyPath::bulk_wide), 5 * 40 * 1024u);
  EXPECT_EQ(bulk_shared_bytes(CopyPath::bulk_compact), 3 * 32 * 1024u);
  EXPECT_EQ(bulk_shared_bytes(CopyPath::vector), 0u);
  for (const CopyPath p : {CopyPath::bulk_wide, CopyPath::bulk_compact}) {
    const BulkShape s = bulk_shape(p);
    EXPECT_EQ(s.chunk_bytes % 16, 0);  // bulk copies move 16-byte multiples
    EXPECT_GE(s.ahead, 1);
    EXPECT_LT(s.ahead, s.stages);
    EXPECT_GE(s.lag, 1);
  }
}

TEST(KernelCopyPath, GridIsOneBlockPerResidentSlotButNoMoreThanChunks) {
  const auto wide = CopyPath::bulk_wide;
  const std::uint64_t chunk = bulk_shape(wide).chunk_bytes;
  EXPECT_EQ(bulk_grid(wide, 132, 1, std::uint64_t{1} << 30), 132);
  EXPECT_EQ(bulk_grid(CopyPath::bulk_compact, 48, 2, std::uint64_t{1} << 30), 96);
  EXPECT_EQ(bulk_grid(wide, 132, 1, 5 * chunk + 17), 5);
  EXPECT_EQ(bulk_grid(wide, 132, 1, chunk - 1), 1);  // no whole chunk: one block copies
  EXPECT_EQ(bulk_grid(wide, 132, 1, 1), 1);
  EXPECT_EQ(bulk_grid(wide, 0, 0, std::uint64_t{1} << 30), 1);  // unknown device facts
}

TEST(KernelCopyPath, IdsNameTheShape) {
  EXPECT_EQ(copy_kernel_id(CopyPath::bulk_wide), "copy/bulk_lockstep/40K/s5/a3/lag2");
  EXPECT_EQ(copy_kernel_id(CopyPath::bulk_compact), "copy/bulk_lockstep/32K/s3/a1/lag2");
  EXPECT_EQ(copy_kernel_id(CopyPath::vector), "copy/block_tile/u8/nc_el/ef");
}

TEST(KernelStub, ReportsNotAvailableWithoutCuda) {
  if (built_with_cuda())
    GTEST_SKIP() << "built with CUDA";
  EXPECT_EQ(device_count(), 0);
  const CaseResult r = run_case(CaseSpec{});
  EXPECT_EQ(r.status, CaseStatus::failed);
  EXPECT_EQ(r.reason, "not available: built without CUDA");
}

TEST(KernelDeviceCount, IsNeverNegative) {
  EXPECT_GE(device_count(), 0);
}

// Skips without a usable GPU; fails instead with GB10TUNE_REQUIRE_GPU=1 (support/gpu_gate.hpp).
class GpuBandwidth : public ::testing::Test {
 protected:
  void SetUp() override {
    using gb10tune::testing::GpuGate;
    const GpuGate gate = gb10tune::testing::gpu_gate_here();
    if (gate.action == GpuGate::Action::fail)
      FAIL() << gate.message;
    if (gate.action == GpuGate::Action::skip)
      GTEST_SKIP() << gate.message;
  }
};

TEST_F(GpuBandwidth, ReadChecksumValidatedOnDeviceMemory) {
  CaseSpec spec = make_spec(Allocator::device, Operation::read, 64 * kMiB);
  spec.samples = 10;
  const CaseResult r = run_case(spec);
  ASSERT_EQ(r.status, CaseStatus::ok) << describe(r);
  EXPECT_TRUE(r.validated);
  EXPECT_NE(r.validation.find("matches"), std::string::npos) << r.validation;
  ASSERT_EQ(r.sample_seconds.size(), 10u);
  for (const double s : r.sample_seconds)
    EXPECT_GT(s, 0.0);
  EXPECT_GT(r.grid_blocks, 0);
  EXPECT_GT(r.block_threads, 0);
  EXPECT_FALSE(r.kernel.empty());
  EXPECT_FALSE(r.device_name.empty());
}

TEST_F(GpuBandwidth, SeveralLaunchesPerSampleMultiplyTrafficAndChecksum) {
  CaseSpec spec = make_spec(Allocator::device, Operation::read, 8 * kMiB + 5);
  spec.launches_per_sample = 7;
  const CaseResult r = run_case(spec);
  ASSERT_EQ(r.status, CaseStatus::ok) << describe(r);
  EXPECT_TRUE(r.validated) << r.validation;
  EXPECT_EQ(r.traffic_bytes_per_sample, 7 * (8 * kMiB + 5));
  spec.launches_per_sample = 0;
  EXPECT_EQ(run_case(spec).status, CaseStatus::failed);
}

TEST_F(GpuBandwidth, CopyDestinationValidated) {
  const CaseResult r = run_case(make_spec(Allocator::device, Operation::copy, 64 * kMiB + 13));
  ASSERT_EQ(r.status, CaseStatus::ok) << describe(r);
  EXPECT_TRUE(r.validated);
  EXPECT_NE(r.validation.find("sampled bytes match"), std::string::npos) << r.validation;
}

TEST_F(GpuBandwidth, WriteValidated) {
  const CaseResult r = run_case(make_spec(Allocator::device, Operation::write, 64 * kMiB + 5));
  ASSERT_EQ(r.status, CaseStatus::ok) << describe(r);
  EXPECT_TRUE(r.validated);
}

TEST_F(GpuBandwidth, MemcpyReferenceValidated) {
  const CaseResult r = run_case(make_spec(Allocator::device, Operation::memcpy_d2d, 64 * kMiB));
  ASSERT_EQ(r.status, CaseStatus::ok) << describe(r);
  EXPECT_TRUE(r.validated);
  EXPECT_EQ(r.grid_blocks, 0);
}

TEST_F(GpuBandwidth, ValidationFailsOnACorruptedBuffer) {
  for (const Operation op : kAllOperations) {
    CaseSpec spec = make_spec(Allocator::device, op, 8 * kMiB + 7);
    spec.inject_corruption = true;
    const CaseResult r = run_case(spec);
    EXPECT_EQ(r.status, CaseStatus::failed) << to_string(op) << " " << describe(r);
    EXPECT_FALSE(r.validated) << to_string(op);
    EXPECT_NE(r.reason.find("validation failed"), std::string::npos) << r.reason;
  }
}

TEST_F(GpuBandwidth, OddAndTinySizesValidated) {
  for (const std::uint64_t bytes : {1ull, 3ull, 15ull, 16ull, 17ull, 4099ull, 1048591ull}) {
    for (const Operation op : kAllOperations) {
      const CaseResult r = run_case(make_spec(Allocator::device, op, bytes));
      EXPECT_EQ(r.status, CaseStatus::ok) << bytes << " " << to_string(op) << " " << describe(r);
      EXPECT_TRUE(r.validated) << bytes << " " << to_string(op);
    }
  }
}

// The bulk copy's chunk boundaries, rounds and remainder (sizes around whole rounds of chunks),
// several launches per sample (the lockstep state resets itself between launches), on every
// allocator the machine can run.
TEST_F(GpuBandwidth, CopyValidatedAroundChunkAndRoundBoundaries) {
  const std::uint64_t chunk = bulk_shape(CopyPath::bulk_wide).chunk_bytes;
  for (const std::uint64_t bytes : {chunk - 16, chunk, chunk + 1, 7 * chunk + 15, 132 * chunk,
                                    132 * chunk + 16, 3 * 132 * chunk - 1, 1000 * chunk + 9}) {
    CaseSpec spec = make_spec(Allocator::device, Operation::copy, bytes);
    spec.launches_per_sample = 3;
    const CaseResult r = run_case(spec);
    EXPECT_EQ(r.status, CaseStatus::ok) << bytes << " " << describe(r);
    EXPECT_TRUE(r.validated) << bytes;
    EXPECT_TRUE(r.kernel == copy_kernel_id(CopyPath::bulk_wide) ||
                r.kernel == copy_kernel_id(CopyPath::bulk_compact) ||
                r.kernel == copy_kernel_id(CopyPath::vector))
        << r.kernel;
  }
  for (const Allocator a : kAllAllocators) {
    const CaseResult r = run_case(make_spec(a, Operation::copy, 40 * chunk + 3));
    std::printf("[ info     ] copy on %-16s %s (%s)\n", std::string(to_string(a)).c_str(),
                describe(r).c_str(), r.kernel.c_str());
    if (r.status != CaseStatus::waived) {
      EXPECT_EQ(r.status, CaseStatus::ok) << to_string(a) << " " << describe(r);
    }
  }
}

TEST_F(GpuBandwidth, BytesAccounting) {
  const std::uint64_t bytes = 16 * kMiB + 1;
  const struct {
    Operation op;
    std::uint64_t traffic;
  } expected[] = {{Operation::read, bytes},
                  {Operation::write, bytes},
                  {Operation::copy, 2 * bytes},
                  {Operation::memcpy_d2d, 2 * bytes}};
  for (const auto& e : expected) {
    CaseSpec spec = make_spec(Allocator::device, e.op, bytes);
    spec.warmup_runs = 0;
    spec.samples = 4;
    const CaseResult r = run_case(spec);
    ASSERT_EQ(r.status, CaseStatus::ok) << describe(r);
    EXPECT_EQ(r.traffic_bytes_per_sample, e.traffic) << to_string(e.op);
    EXPECT_EQ(r.sample_seconds.size(), 4u) << to_string(e.op);
    EXPECT_TRUE(r.warmup_seconds.empty()) << to_string(e.op);
  }
}

// A fixed warm-up makes exactly the runs asked for; a steady one stops once the rule is met or a
// bound is reached, and never before its minimum.
TEST_F(GpuBandwidth, WarmupIsFixedOrRunsUntilSteady) {
  for (const Operation op : kAllOperations) {
    CaseSpec spec = make_spec(Allocator::device, op, 256 * kMiB);
    spec.warmup_runs = 4;
    const CaseResult fixed = run_case(spec);
    ASSERT_EQ(fixed.status, CaseStatus::ok) << describe(fixed);
    EXPECT_EQ(fixed.warmup_seconds.size(), 4u) << to_string(op);

    spec.warmup_runs = 2;
    spec.steady_warmup = true;
    const CaseResult steady = run_case(spec);
    ASSERT_EQ(steady.status, CaseStatus::ok) << describe(steady);
    const WarmupRule rule = steady_warmup_rule(2);
    EXPECT_GE(steady.warmup_seconds.size(), 3u) << to_string(op);  // the window is 3 runs
    EXPECT_LE(steady.warmup_seconds.size(), static_cast<std::size_t>(rule.max_runs));
    const WarmupState state = warmup_state(steady.warmup_seconds, rule);
    EXPECT_NE(state, WarmupState::more) << to_string(op);
    // It stopped at the first run that met the rule or a bound, not later.
    std::vector<double> before(steady.warmup_seconds.begin(), steady.warmup_seconds.end() - 1);
    EXPECT_EQ(warmup_state(before, rule), WarmupState::more) << to_string(op);
    std::printf("[ info     ] %-10s steady warm-up: %zu runs, %s, last spread %.2f%%\n",
                std::string(to_string(op)).c_str(), steady.warmup_seconds.size(),
                state == WarmupState::settled ? "settled" : "limit",
                100.0 * last_spread(steady.warmup_seconds, rule.window).value_or(-1.0));
  }
}

TEST_F(GpuBandwidth, MemcpyOffTheDeviceAllocatorIsWaived) {
  const CaseResult r = run_case(make_spec(Allocator::pinned_host, Operation::memcpy_d2d, kMiB));
  EXPECT_EQ(r.status, CaseStatus::waived) << describe(r);
  EXPECT_FALSE(r.reason.empty());
  EXPECT_TRUE(r.sample_seconds.empty());
}

TEST_F(GpuBandwidth, PageableIsWaivedWithReasonOrValidated) {
  for (const Allocator a : {Allocator::pageable_malloc, Allocator::pageable_mmap}) {
    const CaseResult r = run_case(make_spec(a, Operation::read, 8 * kMiB + 3));
    if (r.status == CaseStatus::waived) {
      EXPECT_EQ(r.reason, "pageable memory is not GPU-accessible here (pageableMemoryAccess = 0)");
      EXPECT_TRUE(r.sample_seconds.empty());
    } else {
      EXPECT_EQ(r.status, CaseStatus::ok) << describe(r);
      EXPECT_TRUE(r.validated);
    }
    std::printf("[ info     ] %s read: %s\n", std::string(to_string(a)).c_str(),
                describe(r).c_str());
  }
}

TEST_F(GpuBandwidth, EveryAllocatorAndOperationIsValidatedOrWaived) {
  for (const Allocator a : kAllAllocators) {
    for (const Operation op : kAllOperations) {
      const CaseResult r = run_case(make_spec(a, op, 8 * kMiB + 3));
      std::printf("[ info     ] %-16s %-10s %s\n", std::string(to_string(a)).c_str(),
                  std::string(to_string(op)).c_str(), describe(r).c_str());
      if (r.status == CaseStatus::waived) {
        EXPECT_FALSE(r.reason.empty());
        continue;
      }
      EXPECT_EQ(r.status, CaseStatus::ok) << to_string(a) << " " << to_string(op);
      EXPECT_TRUE(r.validated) << to_string(a) << " " << to_string(op);
    }
  }
}

TEST_F(GpuBandwidth, TimeScalesWithSize) {
  for (const Operation op : {Operation::read, Operation::copy}) {
    CaseSpec spec = make_spec(Allocator::device, op, 256 * kMiB);
    spec.warmup_runs = 2;
    spec.samples = 9;
    const CaseResult small = run_case(spec);
    spec.bytes *= 2;
    const CaseResult large = run_case(spec);
    ASSERT_EQ(small.status, CaseStatus::ok) << describe(small);
    ASSERT_EQ(large.status, CaseStatus::ok) << describe(large);
    const double ratio = median(large.sample_seconds) / median(small.sample_seconds);
    EXPECT_GE(ratio, 1.6) << to_string(op);
    EXPECT_LE(ratio, 2.5) << to_string(op);
    std::printf("[ info     ] %s: 512 MiB / 256 MiB median time = %.3f\n",
                std::string(to_string(op)).c_str(), ratio);
  }
}

TEST_F(GpuBandwidth, CancelBeforeStartTakesNoSample) {
  const std::atomic<bool> cancel{true};
  CaseSpec spec = make_spec(Allocator::device, Operation::read, kMiB);
  spec.cancel = &cancel;
  const CaseResult r = run_case(spec);
  EXPECT_EQ(r.status, CaseStatus::cancelled) << describe(r);
  EXPECT_TRUE(r.sample_seconds.empty());
}

TEST_F(GpuBandwidth, CancelDuringRunsReturnsPromptly) {
  std::atomic<bool> cancel{false};
  CaseSpec spec = make_spec(Allocator::device, Operation::read, 16 * kMiB);
  spec.samples = 10'000'000;  // hours without the cancel flag
  spec.cancel = &cancel;
  std::thread stopper([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel.store(true);
  });
  const auto start = std::chrono::steady_clock::now();
  const CaseResult r = run_case(spec);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  stopper.join();
  EXPECT_EQ(r.status, CaseStatus::cancelled) << describe(r);
  EXPECT_LT(r.sample_seconds.size(), 10'000'000u);
  EXPECT_LT(elapsed, std::chrono::seconds(20));
}

TEST_F(GpuBandwidth, InvalidSpecsFailWithReason) {
  CaseSpec no_samples = make_spec(Allocator::device, Operation::read, kMiB);
  no_samples.samples = 0;
  EXPECT_EQ(run_case(no_samples).status, CaseStatus::failed);
  const CaseResult no_bytes = run_case(make_spec(Allocator::device, Operation::read, 0));
  EXPECT_EQ(no_bytes.status, CaseStatus::failed);
  EXPECT_FALSE(no_bytes.reason.empty());
  CaseSpec bad_device = make_spec(Allocator::device, Operation::read, kMiB);
  bad_device.device = device_count();
  const CaseResult r = run_case(bad_device);
  EXPECT_EQ(r.status, CaseStatus::failed);
  EXPECT_NE(r.reason.find("no CUDA device"), std::string::npos) << r.reason;
}

TEST_F(GpuBandwidth, RefusesMoreThanTheDeviceHas) {
  // 1 PiB of device memory: refused before any allocation, no crash.
  const CaseResult r =
      run_case(make_spec(Allocator::device, Operation::read, std::uint64_t{1} << 50));
  EXPECT_EQ(r.status, CaseStatus::failed);
  EXPECT_NE(r.reason.find("refusing"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace gb10tune::kernels
