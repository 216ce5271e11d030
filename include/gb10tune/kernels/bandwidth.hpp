// GPU memory bandwidth per allocation path (DESIGN.md K1): the same kernels, only the
// allocation changes. Plain C++ header: no CUDA types, so the core and the CLI build without
// CUDA; without it every case reports "not available: built without CUDA".
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gb10tune::kernels {

// Where the buffers of a case come from.
enum class Allocator {
  device,            // cudaMalloc
  managed,           // cudaMallocManaged, first touched on the host
  managed_prefetch,  // managed + cudaMemPrefetchAsync to the device before timing
  managed_advise,    // managed + SetPreferredLocation(device) + SetAccessedBy(device)
  pinned_host,       // cudaMallocHost, read by the GPU directly (zero-copy)
  pageable_malloc,   // std::malloc, read by the GPU (needs pageableMemoryAccess)
  pageable_mmap,     // anonymous mmap, read by the GPU (needs pageableMemoryAccess)
};

// What the timed kernel does with the buffer(s).
enum class Operation {
  read,        // reduction of the buffer; the checksum is checked against the fill pattern
  write,       // fills the buffer with the pattern; validated by reading back
  copy,        // src -> dst by the copy kernel; dst validated
  memcpy_d2d,  // cudaMemcpyAsync device-to-device reference (device allocator only)
};

// Every allocator and operation, in the order a full bench runs them.
inline constexpr std::array<Allocator, 7> kAllAllocators = {
    Allocator::device,         Allocator::managed,     Allocator::managed_prefetch,
    Allocator::managed_advise, Allocator::pinned_host, Allocator::pageable_malloc,
    Allocator::pageable_mmap};
inline constexpr std::array<Operation, 4> kAllOperations = {Operation::read, Operation::write,
                                                            Operation::copy, Operation::memcpy_d2d};

// One measurement. `bytes` is the size of each buffer (copy and memcpy_d2d use two); the
// caller picks it (>= 4x the L2 cache; 1 GiB by default). Any byte count >= 1 is valid.
struct CaseSpec {
  Allocator allocator = Allocator::device;
  Operation operation = Operation::read;
  std::uint64_t bytes = std::uint64_t{1} << 30;
  int warmup_runs = 3;          // untimed runs first (>= 0): exactly these, or at least these
  bool steady_warmup = false;   // true: then more until steady (warmup.hpp's steady rule)
  int samples = 10;             // timed runs (>= 1)
  int launches_per_sample = 1;  // back-to-back launches inside one timed run (>= 1): lets a
                                // small buffer be timed well above the launch overhead
  int device = 0;               // CUDA device ordinal
  const std::atomic<bool>* cancel = nullptr;  // checked between runs; true -> cancelled
  bool inject_corruption = false;  // test hook: flips one byte so that validation must fail
};

enum class CaseStatus {
  ok,         // every sample ran and the result validated
  waived,     // this machine cannot run the case; `reason` says why
  failed,     // a CUDA or OS error, or validation failed; `reason` says which
  cancelled,  // `cancel` became true; `sample_seconds` holds the samples taken so far
};

struct CaseResult {
  CaseStatus status = CaseStatus::failed;
  std::string reason;                          // empty when ok
  std::vector<double> sample_seconds;          // one per timed sample, CUDA-event time
  std::vector<double> warmup_seconds;          // one per untimed run before them, in order
  std::uint64_t traffic_bytes_per_sample = 0;  // read + write traffic of all launches of a run
  bool validated = false;                      // true when every check below passed
  std::string validation;                      // e.g. "checksum 0x... matches; ..."
  int grid_blocks = 0;                         // launch shape (0 for memcpy_d2d)
  int block_threads = 0;
  std::string kernel;       // id of the kernel variant that ran
  std::string device_name;  // cudaDeviceProp::name, when known
};

// False in the build without CUDA (every case then fails "not available: ...").
bool built_with_cuda();

// Number of CUDA devices; 0 without CUDA, without a driver (cudaErrorInsufficientDriver) or
// without a device (cudaErrorNoDevice). Never throws.
int device_count();

// What the CUDA runtime says about the devices: their count, and when it is 0 why ("built
// without CUDA", or the error of cudaGetDeviceCount with its name). Never throws.
struct DeviceProbe {
  int count = 0;
  std::string error;  // "" when the runtime answered
};
DeviceProbe probe_devices();

// Runs one case on `spec.device`: allocates, fills, warms up, times `samples` runs with CUDA
// events and validates the result. Waives what this machine cannot do (pageable memory without
// pageableMemoryAccess, managed without managedMemory, prefetch/advise without
// concurrentManagedAccess, memcpy_d2d off the device allocator). Refuses to allocate more than
// the free device memory (device and managed) or half the physical host memory (pinned and
// pageable). Never throws: CUDA/OS errors come back as `failed` with the error text. Frees every
// allocation on every path, restores the caller's current device, never resets the device.
CaseResult run_case(const CaseSpec& spec);

// The checksum `read` must produce over `bytes` bytes of the fill pattern with `seed`: the sum
// modulo 2^64 of the buffer's little-endian 32-bit words (the last one truncated to the bytes
// present), word i holding (i + seed) mod 2^32. Closed form, O(1); exposed for tests.
std::uint64_t pattern_checksum(std::uint64_t bytes, std::uint32_t seed);

// Stable snake_case ids used in JSON and on the command line ("device", "managed_prefetch",
// "memcpy_d2d", "ok", ...).
std::string_view to_string(Allocator allocator);
std::string_view to_string(Operation operation);
std::string_view to_string(CaseStatus status);

// Inverse of to_string; std::nullopt for an unknown id.
std::optional<Allocator> parse_allocator(std::string_view id);
std::optional<Operation> parse_operation(std::string_view id);

}  // namespace gb10tune::kernels
