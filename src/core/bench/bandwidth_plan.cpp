#include "gb10tune/bench/bandwidth_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::bench {

using kernels::Allocator;
using kernels::Operation;

namespace {

// Device-memory cases time back-to-back launches in one sample until it moves this much traffic
// (~1 ms on an H200; at most kMaxLaunchesPerSample launches): single 0.25 ms launches of a 1 GiB
// write vary by ~1% from one to the next there, which put the samples' CV above 1% at times.
constexpr std::uint64_t kDeviceSampleTrafficBytes = std::uint64_t{4} << 30;
constexpr std::uint64_t kMaxLaunchesPerSample = 16;

constexpr Allocator kQuickAllocators[] = {Allocator::device, Allocator::managed,
                                          Allocator::pinned_host};

bool wanted_allocator(const BandwidthOptions& options, Allocator allocator) {
  if (!options.allocators.empty()) {
    return std::find(options.allocators.begin(), options.allocators.end(), allocator) !=
           options.allocators.end();
  }
  if (options.quick) {
    return std::find(std::begin(kQuickAllocators), std::end(kQuickAllocators), allocator) !=
           std::end(kQuickAllocators);
  }
  return true;
}

bool wanted_operation(const BandwidthOptions& options, Allocator allocator, Operation operation) {
  if (operation == Operation::memcpy_d2d && allocator != Allocator::device) {
    return false;  // one reference row: the copy engine on device memory
  }
  if (!options.operations.empty()) {
    return std::find(options.operations.begin(), options.operations.end(), operation) !=
           options.operations.end();
  }
  if (options.quick) {
    // Device: read, copy and the reference; the other paths: read, as in the report.
    return allocator == Allocator::device ? operation != Operation::write
                                          : operation == Operation::read;
  }
  return true;
}

// Why the device cannot run `allocator`, "" when it can.
std::string capability_waiver(Allocator allocator, const gpu::GpuDevice& device) {
  switch (allocator) {
    case Allocator::device:
    case Allocator::pinned_host:
      return {};
    case Allocator::managed:
      return device.managed_memory ? ""
                                   : "managed memory is not supported here (managedMemory = 0)";
    case Allocator::managed_prefetch:
    case Allocator::managed_advise:
      if (!device.managed_memory) {
        return "managed memory is not supported here (managedMemory = 0)";
      }
      return device.concurrent_managed_access
                 ? ""
                 : "prefetch and advice need concurrentManagedAccess, which is 0 here";
    case Allocator::pageable_malloc:
    case Allocator::pageable_mmap:
      return device.pageable_memory_access
                 ? ""
                 : "pageable memory is not GPU-accessible here (pageableMemoryAccess = 0)";
  }
  return {};
}

}  // namespace

int buffers_of(Operation operation) {
  return operation == Operation::copy || operation == Operation::memcpy_d2d ? 2 : 1;
}

bool uses_host_memory(Allocator allocator, const gpu::GpuDevice& device) {
  return allocator != Allocator::device || device.integrated;
}

Expected<BandwidthPlan> plan_bandwidth(const gpu::GpuDevice& device,
                                       const BandwidthOptions& options,
                                       std::optional<std::uint64_t> mem_available) {
  const int samples = options.samples > 0 ? options.samples : (options.quick ? 5 : 10);
  // Without --warmup every case warms up until steady (kernels/warmup.hpp), at least 3 runs
  // (2 with quick); --warmup N asks for exactly N.
  const bool steady_warmup = options.warmup == 0;
  const int warmup = options.warmup > 0 ? options.warmup : (options.quick ? 2 : 3);
  if (options.samples < 0 || options.warmup < 0) {
    return Error{"--samples and --warmup must be positive"};
  }
  if (options.buffer_bytes != 0 && options.buffer_bytes < 4096) {
    return Error{
        fmt::format("--size {} is too small to measure anything; use at least 4 KiB "
                    "(the default is 1 GiB)",
                    options.buffer_bytes)};
  }

  BandwidthPlan plan;
  const std::uint64_t l2_floor = 4 * device.l2_bytes;
  const std::uint64_t mib = std::uint64_t{1} << 20;
  const std::uint64_t l2_floor_mib = (l2_floor + mib - 1) / mib * mib;
  if (options.buffer_bytes != 0) {
    plan.buffer_bytes = options.buffer_bytes;
    if (plan.buffer_bytes < l2_floor) {
      plan.notes.push_back(fmt::format(
          "the buffer ({}) is smaller than 4x the L2 cache ({}): figures include cache hits",
          format_bytes(plan.buffer_bytes), format_bytes(l2_floor)));
    }
  } else {
    plan.buffer_bytes = std::max(kDefaultBufferBytes, l2_floor_mib);
  }
  if (mem_available) {
    plan.host_budget_bytes =
        *mem_available > options.reserve_bytes ? *mem_available - options.reserve_bytes : 0;
  }

  // Bytes per buffer of a case: the plan's, but pinned host memory with a default --quick.
  const bool small_pinned = options.quick && options.buffer_bytes == 0;
  const std::uint64_t pinned_bytes =
      std::min(plan.buffer_bytes, std::max(kQuickPinnedBytes, l2_floor_mib));
  for (Allocator allocator : kernels::kAllAllocators) {
    if (!wanted_allocator(options, allocator)) {
      continue;
    }
    const std::uint64_t bytes =
        small_pinned && allocator == Allocator::pinned_host ? pinned_bytes : plan.buffer_bytes;
    if (bytes != plan.buffer_bytes) {
      plan.notes.push_back(fmt::format(
          "--quick reads {} in {} buffers: pinning {} would take most of the quick bench's time",
          kernels::to_string(allocator), format_bytes(bytes), format_bytes(plan.buffer_bytes)));
    }
    const std::string waiver = capability_waiver(allocator, device);
    for (Operation operation : kernels::kAllOperations) {
      if (!wanted_operation(options, allocator, operation)) {
        continue;
      }
      PlannedCase planned;
      planned.spec.allocator = allocator;
      planned.spec.operation = operation;
      planned.spec.bytes = bytes;
      if (allocator == Allocator::device) {
        const std::uint64_t traffic = bytes * static_cast<std::uint64_t>(buffers_of(operation));
        planned.spec.launches_per_sample = static_cast<int>(std::clamp<std::uint64_t>(
            (kDeviceSampleTrafficBytes + traffic - 1) / traffic, 1, kMaxLaunchesPerSample));
      }
      planned.spec.samples = samples;
      planned.spec.warmup_runs = warmup;
      planned.spec.steady_warmup = steady_warmup;
      planned.spec.device = options.device;
      planned.waived = waiver;
      if (uses_host_memory(allocator, device)) {
        planned.host_bytes = bytes * static_cast<std::uint64_t>(buffers_of(operation));
        if (planned.waived.empty() && !mem_available) {
          planned.waived = "MemAvailable is unknown, so host memory cannot be taken safely";
        } else if (planned.waived.empty() && planned.host_bytes > plan.host_budget_bytes) {
          planned.waived = fmt::format(
              "needs {} of host memory but MemAvailable minus the {} reserve leaves {}; use a "
              "smaller --size or --reserve",
              format_bytes(planned.host_bytes), format_bytes_si(options.reserve_bytes),
              format_bytes(plan.host_budget_bytes));
        }
      }
      plan.cases.push_back(std::move(planned));
    }
  }

  const bool device_read_planned =
      std::any_of(plan.cases.begin(), plan.cases.end(), [](const PlannedCase& c) {
        return c.spec.allocator == Allocator::device && c.spec.operation == Operation::read &&
               c.waived.empty();
      });
  if (device_read_planned) {
    plan.scaling_bytes = plan.buffer_bytes / 2;
  }
  if (options.sweep) {
    for (std::uint64_t bytes = std::uint64_t{1} << 20; bytes < plan.buffer_bytes; bytes *= 2) {
      plan.sweep_bytes.push_back(bytes);
    }
    plan.sweep_bytes.push_back(plan.buffer_bytes);
  }
  return plan;
}

}  // namespace gb10tune::bench
