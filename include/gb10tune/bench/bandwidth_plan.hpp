// Which bandwidth cases to run, how large, and which to waive before touching the GPU:
// allocators the device cannot use, and host-backed buffers that would not fit in
// MemAvailable minus a reserve (on GB10 the GPU and the CPU share one pool, and a running
// llama-server may hold most of it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/gpu/gpu_info.hpp"
#include "gb10tune/kernels/bandwidth.hpp"
#include "gb10tune/plan/reserve.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::bench {

// Default bytes per buffer, quick or not: the quick bench must read what the full one reads
// (on an H200 a 256 MiB read is 4-10% slower than a 1 GiB one), so it saves time on the number
// of cases and samples, never on the size.
inline constexpr std::uint64_t kDefaultBufferBytes = std::uint64_t{1} << 30;
// The one exception: --quick reads pinned host memory in buffers of this size (at least 4x L2).
// Pinning, filling and freeing 1 GiB took ~0.8 s of a 1.2 s quick bench on an H200, where the
// pinned read is bound by the host link: 50.8-51.2 GB/s at 256 MiB, 49.9-51.2 at 1 GiB.
inline constexpr std::uint64_t kQuickPinnedBytes = std::uint64_t{256} << 20;

struct BandwidthOptions {
  std::uint64_t buffer_bytes = 0;  // 0: the default (1 GiB, >= 4x L2; quick pinned: 256 MiB)
  bool quick = false;              // a ~1 s subset: device read/copy, memcpy, managed, pinned
  bool sweep = false;              // also device reads from 1 MiB up to the buffer size
  int samples = 0;                 // 0: 10 (5 with quick)
  int warmup = 0;  // 0: until steady, at least 3 (2 with quick); N: exactly N untimed runs
  std::uint64_t reserve_bytes = plan::kDefaultReserveBytes;
  std::vector<kernels::Allocator> allocators;  // empty: all
  std::vector<kernels::Operation> operations;  // empty: all
  int device = 0;
};

// One case as planned; waived ones are never run.
struct PlannedCase {
  kernels::CaseSpec spec;
  std::uint64_t host_bytes = 0;  // memory taken from MemAvailable (all of it on unified GPUs)
  std::string waived;            // why it will not run, "" when it will
};

struct BandwidthPlan {
  std::uint64_t buffer_bytes = 0;
  std::uint64_t host_budget_bytes = 0;  // MemAvailable − reserve, 0 when none is left
  std::vector<PlannedCase> cases;
  std::vector<std::uint64_t> sweep_bytes;  // device-read sizes of the sweep, ascending
  std::uint64_t scaling_bytes = 0;         // the half-size device read of the scaling check
  std::vector<std::string> notes;          // things the user should know about the plan
};

// Plans the run for `device`. `mem_available` is MemAvailable in bytes (nullopt: unknown, and
// host-backed cases are then waived). An Error for options that make no sense (zero samples,
// a buffer smaller than 4 KiB).
Expected<BandwidthPlan> plan_bandwidth(const gpu::GpuDevice& device,
                                       const BandwidthOptions& options,
                                       std::optional<std::uint64_t> mem_available);

// Buffers a case allocates: two for copy and memcpy_d2d, one otherwise.
int buffers_of(kernels::Operation operation);

// True for allocators whose memory comes from the host (everything except cudaMalloc on a
// discrete GPU; on an integrated GPU cudaMalloc memory is host memory too).
bool uses_host_memory(kernels::Allocator allocator, const gpu::GpuDevice& device);

}  // namespace gb10tune::bench
