// run_case with CUDA: allocation paths, fills, timed runs and validation of the bandwidth
// benchmark. Kernels live in bandwidth_kernels.cuh; docs/bandwidth-kernels.md says how the
// variants below were chosen.
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bandwidth_kernels.cuh"
#include "gb10tune/kernels/bandwidth.hpp"
#include "gb10tune/kernels/copy_path.hpp"
#include "gb10tune/kernels/warmup.hpp"

namespace gb10tune::kernels {

namespace {

using detail::Layout;
using detail::Load;
using detail::Store;

// ---- The tuned variants (docs/bandwidth-kernels.md, tools/bwtune) --------------------------

constexpr Layout kReadLayout = Layout::block_tile;
constexpr int kReadUnroll = 4;
constexpr Load kReadLoad = Load::nc;
constexpr int kReadBlock = 512;
constexpr const char* kReadId = "read/block_tile/u4/nc";

constexpr Layout kWriteLayout = Layout::block_tile;
constexpr int kWriteUnroll = 8;
constexpr Store kWriteStore = Store::plain;
constexpr int kWriteBlock = 1024;
constexpr const char* kWriteId = "write/block_tile/u8/plain";

constexpr Layout kCopyLayout = Layout::block_tile;
constexpr int kCopyUnroll = 8;
constexpr Load kCopyLoad = Load::nc_el;
constexpr Store kCopyStore = Store::ef;
constexpr int kCopyBlock = 1024;

constexpr auto kReadKernel = detail::read_kernel<kReadLayout, kReadUnroll, kReadLoad>;
constexpr auto kWriteKernel = detail::write_kernel<kWriteLayout, kWriteUnroll, kWriteStore>;
constexpr auto kCopyKernel = detail::copy_kernel<kCopyLayout, kCopyUnroll, kCopyLoad, kCopyStore>;

// Bulk copies in lockstep (sm_90+), the two shapes of copy_path.hpp.
template <CopyPath P>
constexpr auto kBulkKernel =
    detail::bulk_copy_kernel<bulk_shape(P).chunk_bytes, bulk_shape(P).stages, bulk_shape(P).ahead,
                             bulk_shape(P).lag>;
constexpr int kBulkThreads = 32;

// Pattern seeds: distinct per role so that a buffer left over from another role never passes.
constexpr std::uint32_t kReadSeed = 0x9e3779b9u;
constexpr std::uint32_t kWriteSeed = 0x7f4a7c15u;
constexpr std::uint32_t kCopySeed = 0x85ebca6bu;
constexpr unsigned char kPoison = 0xa5;

// Bytes compared exactly at the start, middle and end of a validated buffer.
constexpr std::uint64_t kSampleWindow = 64 * 1024;

// ---- Errors ------------------------------------------------------------------------------

// A CUDA or OS failure inside run_case; never leaves this file (run_case turns it into failed).
class CaseFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CaseFailure "<what>: <CUDA error text>" unless err is cudaSuccess.
void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess)
    return;
  cudaGetLastError();  // clear a non-sticky error so that later calls are not blamed
  throw CaseFailure(std::string(what) + ": " + cudaGetErrorString(err));
}

std::string hex(std::uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, value);
  return text;
}

// ---- Device state ------------------------------------------------------------------------

// Restores the calling thread's current device on scope exit.
class DeviceGuard {
 public:
  DeviceGuard() { m_saved = cudaGetDevice(&m_device) == cudaSuccess; }
  ~DeviceGuard() {
    if (m_saved)
      cudaSetDevice(m_device);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int m_device = 0;
  bool m_saved = false;
};

// What run_case needs to know about the device.
struct DeviceFacts {
  int ordinal = 0;
  std::string name;
  int sm_count = 0;
  bool managed = false;
  bool concurrent_managed = false;
  bool pageable = false;
  bool can_map_host = false;
};

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  check(cudaDeviceGetAttribute(&value, attr, device), "cudaDeviceGetAttribute");
  return value;
}

DeviceFacts query_device(int device) {
  DeviceFacts facts;
  facts.ordinal = device;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  facts.name = prop.name;
  facts.sm_count = attribute(cudaDevAttrMultiProcessorCount, device);
  facts.managed = attribute(cudaDevAttrManagedMemory, device) != 0;
  facts.concurrent_managed = attribute(cudaDevAttrConcurrentManagedAccess, device) != 0;
  facts.pageable = attribute(cudaDevAttrPageableMemoryAccess, device) != 0;
  facts.can_map_host = attribute(cudaDevAttrCanMapHostMemory, device) != 0;
  return facts;
}

// Why this device cannot run the case, or "" when it can.
std::string waiver(const CaseSpec& spec, const DeviceFacts& facts) {
  if (spec.operation == Operation::memcpy_d2d && spec.allocator != Allocator::device) {
    return "memcpy_d2d is the device-to-device reference; it runs on the device allocator only";
  }
  switch (spec.allocator) {
    case Allocator::device:
      return "";
    case Allocator::managed:
    case Allocator::managed_prefetch:
    case Allocator::managed_advise:
      if (!facts.managed)
        return "managed memory is not supported here (managedMemory = 0)";
      if (spec.allocator != Allocator::managed && !facts.concurrent_managed) {
        return "prefetch and advise need concurrent managed access (concurrentManagedAccess = 0)";
      }
      return "";
    case Allocator::pinned_host:
      if (!facts.can_map_host) {
        return "pinned host memory cannot be mapped for the GPU here (canMapHostMemory = 0)";
      }
      return "";
    case Allocator::pageable_malloc:
    case Allocator::pageable_mmap:
      if (!facts.pageable) {
        return "pageable memory is not GPU-accessible here (pageableMemoryAccess = 0)";
      }
      return "";
  }
  return "unknown allocator";
}

// ---- Buffers -----------------------------------------------------------------------------

bool lives_on_host(Allocator allocator) {
  return allocator != Allocator::device;
}

// Refuses (CaseFailure) a request larger than what this allocator may take here: the device's
// free memory for device and managed memory, half the physical memory for host memory.
void check_capacity(Allocator allocator, std::uint64_t total_bytes) {
  const bool host = allocator == Allocator::pinned_host ||
                    allocator == Allocator::pageable_malloc ||
                    allocator == Allocator::pageable_mmap;
  std::uint64_t limit = 0;
  const char* what = nullptr;
  if (host) {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0)
      return;  // unknown: let the allocator decide
    limit = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 2;
    what = "half the physical host memory";
  } else {
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    limit = free_bytes;
    what = "the free device memory";
  }
  if (total_bytes > limit) {
    throw CaseFailure("refusing to allocate " + std::to_string(total_bytes) + " bytes: more than " +
                      what + " (" + std::to_string(limit) + " bytes)");
  }
}

// One allocation of `bytes` from one allocator, freed by the destructor.
class Buffer {
 public:
  Buffer(Allocator allocator, std::uint64_t bytes) : m_allocator(allocator), m_bytes(bytes) {
    allocate();
    if (reinterpret_cast<std::uintptr_t>(m_ptr) % 16 != 0) {
      release();  // the destructor does not run when the constructor throws
      throw CaseFailure("allocation is not 16-byte aligned");
    }
  }
  ~Buffer() { release(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* get() const { return m_ptr; }
  std::uint64_t size() const { return m_bytes; }
  Allocator allocator() const { return m_allocator; }

 private:
  void allocate() {
    const std::string size = std::to_string(m_bytes) + " bytes";
    switch (m_allocator) {
      case Allocator::device:
        check(cudaMalloc(&m_ptr, m_bytes), ("cudaMalloc(" + size + ")").c_str());
        return;
      case Allocator::managed:
      case Allocator::managed_prefetch:
      case Allocator::managed_advise:
        check(cudaMallocManaged(&m_ptr, m_bytes, cudaMemAttachGlobal),
              ("cudaMallocManaged(" + size + ")").c_str());
        return;
      case Allocator::pinned_host:
        check(cudaMallocHost(&m_ptr, m_bytes), ("cudaMallocHost(" + size + ")").c_str());
        return;
      case Allocator::pageable_malloc:
        m_ptr = std::malloc(m_bytes);
        if (m_ptr == nullptr)
          throw CaseFailure("malloc(" + size + "): out of memory");
        return;
      case Allocator::pageable_mmap: {
        void* p =
            mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
          throw CaseFailure("mmap(" + size + "): " + std::strerror(errno));
        }
        m_ptr = p;
        return;
      }
    }
  }

  void release() noexcept {
    if (m_ptr == nullptr)
      return;
    switch (m_allocator) {
      case Allocator::device:
      case Allocator::managed:
      case Allocator::managed_prefetch:
      case Allocator::managed_advise:
        cudaFree(m_ptr);
        break;
      case Allocator::pinned_host:
        cudaFreeHost(m_ptr);
        break;
      case Allocator::pageable_malloc:
        std::free(m_ptr);
        break;
      case Allocator::pageable_mmap:
        munmap(m_ptr, m_bytes);
        break;
    }
    m_ptr = nullptr;
  }

  Allocator m_allocator;
  std::uint64_t m_bytes;
  void* m_ptr = nullptr;
};

class Stream {
 public:
  Stream() {
    check(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~Stream() { cudaStreamDestroy(m_stream); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return m_stream; }

 private:
  cudaStream_t m_stream = nullptr;
};

class Event {
 public:
  Event() { check(cudaEventCreate(&m_event), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(m_event); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return m_event; }

 private:
  cudaEvent_t m_event = nullptr;
};

// ---- Launch shapes -----------------------------------------------------------------------

struct Shape {
  int grid = 0;
  int block = 0;
};

// SM count x resident blocks per SM (occupancy), but no more blocks than have a batch of work.
template <typename Kernel>
Shape shape_for(Kernel kernel, int block, int unroll, const DeviceFacts& facts,
                std::uint64_t n_vec) {
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  const std::uint64_t resident = std::uint64_t(std::max(per_sm, 1)) * std::max(facts.sm_count, 1);
  const std::uint64_t per_block = std::uint64_t(block) * unroll;
  const std::uint64_t useful = std::max<std::uint64_t>((n_vec + per_block - 1) / per_block, 1);
  return Shape{static_cast<int>(std::min(resident, useful)), block};
}

Shape read_shape(const DeviceFacts& facts, std::uint64_t bytes) {
  return shape_for(kReadKernel, kReadBlock, kReadUnroll, facts, bytes / 16);
}

Shape write_shape(const DeviceFacts& facts, std::uint64_t bytes) {
  return shape_for(kWriteKernel, kWriteBlock, kWriteUnroll, facts, bytes / 16);
}

// The copy kernel for this device and its launch shape.
struct CopyLaunch {
  CopyPath path = CopyPath::vector;
  Shape shape;
  int shared_bytes = 0;  // dynamic shared memory per block
};

// The bulk kernel of a bulk path.
auto bulk_kernel(CopyPath path) {
  return path == CopyPath::bulk_wide ? kBulkKernel<CopyPath::bulk_wide>
                                     : kBulkKernel<CopyPath::bulk_compact>;
}

// Picks the copy path (copy_path.hpp) from what the bulk kernel was compiled for on this device
// and the shared memory a block may have, then sizes the grid.
CopyLaunch plan_copy(const DeviceFacts& facts, std::uint64_t bytes) {
  cudaFuncAttributes attrs{};
  check(cudaFuncGetAttributes(&attrs, kBulkKernel<CopyPath::bulk_wide>),
        "cudaFuncGetAttributes (bulk copy)");
  const int optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, facts.ordinal);
  const std::uint64_t available =
      static_cast<std::uint64_t>(std::max(optin - static_cast<int>(attrs.sharedSizeBytes), 0));
  CopyLaunch launch;
  launch.path = choose_copy_path(attrs.ptxVersion, available);
  if (launch.path == CopyPath::vector) {
    launch.shape = shape_for(kCopyKernel, kCopyBlock, kCopyUnroll, facts, bytes / 16);
    return launch;
  }
  const auto kernel = bulk_kernel(launch.path);
  launch.shared_bytes = static_cast<int>(bulk_shared_bytes(launch.path));
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             launch.shared_bytes),
        "cudaFuncSetAttribute (bulk copy shared memory)");
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBulkThreads,
                                                      launch.shared_bytes),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor (bulk copy)");
  launch.shape = Shape{bulk_grid(launch.path, facts.sm_count, per_sm, bytes), kBulkThreads};
  return launch;
}

// The buffer as n_vec vectors + tail bytes.
struct Geometry {
  std::uint64_t n_vec;
  unsigned tail;
};

Geometry geometry(std::uint64_t bytes) {
  return {bytes / 16, static_cast<unsigned>(bytes % 16)};
}

void check_launch(const char* what) {
  check(cudaGetLastError(), what);
}

void launch_read(const Shape& s, const void* src, std::uint64_t bytes, unsigned long long* sum,
                 cudaStream_t stream) {
  const Geometry g = geometry(bytes);
  kReadKernel<<<s.grid, s.block, 0, stream>>>(static_cast<const uint4*>(src), g.n_vec, g.tail, sum);
  check_launch("read kernel launch");
}

void launch_write(const Shape& s, void* dst, std::uint64_t bytes, std::uint32_t seed,
                  cudaStream_t stream) {
  const Geometry g = geometry(bytes);
  kWriteKernel<<<s.grid, s.block, 0, stream>>>(static_cast<uint4*>(dst), g.n_vec, g.tail, seed);
  check_launch("write kernel launch");
}

// `sync`: the bulk kernels' lockstep state (zeroed once; unused by the vector kernel).
void launch_copy(const CopyLaunch& c, const void* src, void* dst, std::uint64_t bytes,
                 detail::BulkCopySync* sync, cudaStream_t stream) {
  const Geometry g = geometry(bytes);
  const auto* from = static_cast<const uint4*>(src);
  auto* to = static_cast<uint4*>(dst);
  const Shape& s = c.shape;
  if (c.path == CopyPath::vector) {
    kCopyKernel<<<s.grid, s.block, 0, stream>>>(from, to, g.n_vec, g.tail);
  } else {
    bulk_kernel(c.path)<<<s.grid, s.block, c.shared_bytes, stream>>>(from, to, g.n_vec, g.tail,
                                                                     sync);
  }
  check_launch("copy kernel launch");
}

// ---- Host-side pattern -------------------------------------------------------------------

unsigned char host_pattern_byte(std::uint64_t offset, std::uint32_t seed) {
  const auto word = static_cast<std::uint32_t>(offset / 4 + seed);
  return static_cast<unsigned char>(word >> (8 * (offset % 4)));
}

// Writes the pattern from the CPU (this is the buffer's first touch for host-side allocators).
// Runs fn(begin, end) over [0, bytes) split into word-aligned chunks, one thread per chunk.
// Host first touch of gigabytes is page-fault bound: several threads take it several times
// faster, which keeps the full bench within its time budget.
template <typename Fn>
void host_parallel(std::uint64_t bytes, Fn fn) {
  constexpr std::uint64_t kMinChunk = std::uint64_t{64} << 20;
  const std::uint64_t cores = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  const std::uint64_t parts = std::max<std::uint64_t>(1, std::min(cores, bytes / kMinChunk));
  const std::uint64_t chunk = (bytes / parts + 3) / 4 * 4;
  std::vector<std::thread> threads;
  for (std::uint64_t p = 1; p < parts; ++p) {
    const std::uint64_t begin = std::min(bytes, p * chunk);
    const std::uint64_t end = p + 1 == parts ? bytes : std::min(bytes, (p + 1) * chunk);
    threads.emplace_back([=] { fn(begin, end); });
  }
  fn(0, std::min(bytes, chunk));
  for (std::thread& thread : threads)
    thread.join();
}

void host_fill(void* ptr, std::uint64_t bytes, std::uint32_t seed) {
  host_parallel(bytes, [ptr, bytes, seed](std::uint64_t begin, std::uint64_t end) {
    auto* words = static_cast<std::uint32_t*>(ptr);
    const std::uint64_t n_words = bytes / 4;
    for (std::uint64_t i = begin / 4; i < std::min(end / 4, n_words); ++i)
      words[i] = static_cast<std::uint32_t>(i + seed);
    if (end == bytes) {
      auto* tail = static_cast<unsigned char*>(ptr);
      for (std::uint64_t b = n_words * 4; b < bytes; ++b)
        tail[b] = host_pattern_byte(b, seed);
    }
  });
}

void host_memset(void* ptr, int value, std::uint64_t bytes) {
  host_parallel(bytes, [ptr, value](std::uint64_t begin, std::uint64_t end) {
    std::memset(static_cast<unsigned char*>(ptr) + begin, value, end - begin);
  });
}

// ---- Preparing buffers -------------------------------------------------------------------

cudaMemLocation device_location(int device) {
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id = device;
  return location;
}

// Hints given right after allocation, before the first touch, as an application would.
void advise(const Buffer& buffer, const DeviceFacts& facts) {
  if (buffer.allocator() != Allocator::managed_advise)
    return;
  const cudaMemLocation where = device_location(facts.ordinal);
  check(cudaMemAdvise(buffer.get(), buffer.size(), cudaMemAdviseSetPreferredLocation, where),
        "cudaMemAdvise(SetPreferredLocation)");
  check(cudaMemAdvise(buffer.get(), buffer.size(), cudaMemAdviseSetAccessedBy, where),
        "cudaMemAdvise(SetAccessedBy)");
}

// Moves a managed_prefetch buffer to the device once its content is written.
void prefetch(const Buffer& buffer, const DeviceFacts& facts, cudaStream_t stream) {
  if (buffer.allocator() != Allocator::managed_prefetch)
    return;
  check(
      cudaMemPrefetchAsync(buffer.get(), buffer.size(), device_location(facts.ordinal), 0, stream),
      "cudaMemPrefetchAsync");
  check(cudaStreamSynchronize(stream), "cudaMemPrefetchAsync (wait)");
}

// Fills with the pattern: the write kernel for device memory, the CPU for everything else.
void fill_pattern(const Buffer& buffer, std::uint32_t seed, const DeviceFacts& facts,
                  cudaStream_t stream) {
  if (lives_on_host(buffer.allocator())) {
    host_fill(buffer.get(), buffer.size(), seed);
  } else {
    const Shape s = write_shape(facts, buffer.size());
    launch_write(s, buffer.get(), buffer.size(), seed, stream);
    check(cudaStreamSynchronize(stream), "fill");
  }
  prefetch(buffer, facts, stream);
}

// Fills with a constant that never matches the pattern, the same way as fill_pattern.
void fill_poison(const Buffer& buffer, const DeviceFacts& facts, cudaStream_t stream) {
  if (lives_on_host(buffer.allocator())) {
    host_memset(buffer.get(), kPoison, buffer.size());
  } else {
    check(cudaMemsetAsync(buffer.get(), kPoison, buffer.size(), stream), "cudaMemsetAsync");
    check(cudaStreamSynchronize(stream), "poison");
  }
  prefetch(buffer, facts, stream);
}

// Test hook: flips the bits of the byte in the middle of the buffer.
void corrupt_one_byte(const Buffer& buffer) {
  const std::uint64_t at = buffer.size() / 2;
  auto* p = static_cast<unsigned char*>(buffer.get()) + at;
  unsigned char value = 0;
  check(cudaMemcpy(&value, p, 1, cudaMemcpyDefault), "cudaMemcpy (corrupt, read)");
  value = static_cast<unsigned char>(~value);
  check(cudaMemcpy(p, &value, 1, cudaMemcpyDefault), "cudaMemcpy (corrupt, write)");
}

// ---- Validation --------------------------------------------------------------------------

struct Verdict {
  bool ok = true;
  std::string text;
};

// Runs the read kernel over the buffer once and returns its checksum.
std::uint64_t device_checksum(const void* ptr, std::uint64_t bytes, const Shape& shape,
                              unsigned long long* sum, cudaStream_t stream) {
  check(cudaMemsetAsync(sum, 0, sizeof *sum, stream), "cudaMemsetAsync (checksum)");
  launch_read(shape, ptr, bytes, sum, stream);
  unsigned long long host = 0;
  check(cudaMemcpyAsync(&host, sum, sizeof host, cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (checksum)");
  check(cudaStreamSynchronize(stream), "checksum");
  return host;
}

// Compares [begin, end) of the buffer with the pattern, byte for byte.
std::string compare_window(const void* ptr, std::uint64_t begin, std::uint64_t end,
                           std::uint32_t seed) {
  std::vector<unsigned char> copy(end - begin);
  check(cudaMemcpy(copy.data(), static_cast<const unsigned char*>(ptr) + begin, copy.size(),
                   cudaMemcpyDefault),
        "cudaMemcpy (read back)");
  for (std::uint64_t i = 0; i < copy.size(); ++i) {
    const unsigned char expected = host_pattern_byte(begin + i, seed);
    if (copy[i] != expected) {
      return "byte " + std::to_string(begin + i) + " is " + std::to_string(copy[i]) +
             ", expected " + std::to_string(expected);
    }
  }
  return "";
}

// Checks that the buffer holds the pattern: full checksum on the GPU, exact comparison of a
// window at the start, middle and end on the host.
Verdict validate_pattern(const void* ptr, std::uint64_t bytes, std::uint32_t seed,
                         const DeviceFacts& facts, unsigned long long* sum, cudaStream_t stream) {
  Verdict verdict;
  const Shape shape = read_shape(facts, bytes);
  const std::uint64_t got = device_checksum(ptr, bytes, shape, sum, stream);
  const std::uint64_t want = pattern_checksum(bytes, seed);
  if (got != want) {
    verdict.ok = false;
    verdict.text = "checksum " + hex(got) + " != expected " + hex(want);
    return verdict;
  }
  const std::uint64_t window = std::min(bytes, kSampleWindow);
  const std::uint64_t middle = (bytes - window) / 2;
  for (const std::uint64_t begin : {std::uint64_t{0}, middle, bytes - window}) {
    std::string mismatch = compare_window(ptr, begin, begin + window, seed);
    if (!mismatch.empty()) {
      verdict.ok = false;
      verdict.text = "checksum " + hex(got) + " matches but " + mismatch;
      return verdict;
    }
  }
  verdict.text =
      "checksum " + hex(got) + " matches; " + std::to_string(3 * window) + " sampled bytes match";
  return verdict;
}

// ---- Timed runs --------------------------------------------------------------------------

// One timed run: `before` (untimed), events around `body`, then `after` (untimed host check).
struct RunSteps {
  std::function<void(cudaStream_t)> before;
  std::function<void(cudaStream_t)> body;
  std::function<void()> after;
};

bool cancel_requested(const CaseSpec& spec) {
  return spec.cancel != nullptr && spec.cancel->load(std::memory_order_relaxed);
}

std::uint64_t launches(const CaseSpec& spec) {
  return static_cast<std::uint64_t>(spec.launches_per_sample);
}

// One run between two events: its time in seconds.
double timed_run(const CaseSpec& spec, const RunSteps& steps, cudaStream_t stream,
                 const Event& start, const Event& stop) {
  if (steps.before)
    steps.before(stream);
  check(cudaEventRecord(start.get(), stream), "cudaEventRecord");
  for (int launch = 0; launch < spec.launches_per_sample; ++launch)
    steps.body(stream);
  check(cudaEventRecord(stop.get(), stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop.get()), "timed run");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  if (steps.after)
    steps.after();
  return static_cast<double>(ms) * 1e-3;
}

// Runs warm-ups (a fixed count, or until steady: warmup.hpp) then samples; false when cancelled
// between two runs.
bool run_timed(const CaseSpec& spec, const RunSteps& steps, cudaStream_t stream,
               CaseResult& result) {
  Event start;
  Event stop;
  const WarmupRule rule = spec.steady_warmup ? steady_warmup_rule(spec.warmup_runs)
                                             : fixed_warmup_rule(spec.warmup_runs);
  while (warmup_state(result.warmup_seconds, rule) == WarmupState::more) {
    if (cancel_requested(spec))
      return false;
    result.warmup_seconds.push_back(timed_run(spec, steps, stream, start, stop));
  }
  for (int run = 0; run < spec.samples; ++run) {
    if (cancel_requested(spec))
      return false;
    result.sample_seconds.push_back(timed_run(spec, steps, stream, start, stop));
  }
  return true;
}

// ---- The four operations -----------------------------------------------------------------

struct Context {
  const CaseSpec& spec;
  const DeviceFacts& facts;
  cudaStream_t stream;
  unsigned long long* sum;  // 8 bytes of device memory for checksums
  CaseResult& result;
};

// Records the outcome of run_timed + validation in the result.
void finish(Context& ctx, bool completed, const Verdict& verdict) {
  if (!completed) {
    ctx.result.status = CaseStatus::cancelled;
    ctx.result.reason = "cancelled";
    return;
  }
  ctx.result.validated = verdict.ok;
  ctx.result.validation = verdict.text;
  ctx.result.status = verdict.ok ? CaseStatus::ok : CaseStatus::failed;
  if (!verdict.ok)
    ctx.result.reason = "validation failed: " + verdict.text;
}

void run_read(Context& ctx) {
  const CaseSpec& spec = ctx.spec;
  Buffer src(spec.allocator, spec.bytes);
  advise(src, ctx.facts);
  fill_pattern(src, kReadSeed, ctx.facts, ctx.stream);
  if (spec.inject_corruption)
    corrupt_one_byte(src);

  const Shape shape = read_shape(ctx.facts, spec.bytes);
  ctx.result.grid_blocks = shape.grid;
  ctx.result.block_threads = shape.block;
  ctx.result.kernel = kReadId;
  ctx.result.traffic_bytes_per_sample = spec.bytes * launches(spec);

  // Every launch adds the buffer's checksum into the same accumulator (mod 2^64).
  const std::uint64_t want = pattern_checksum(spec.bytes, kReadSeed) * launches(spec);
  Verdict verdict;
  int runs = 0;
  RunSteps steps;
  steps.before = [&](cudaStream_t s) {
    check(cudaMemsetAsync(ctx.sum, 0, sizeof *ctx.sum, s), "cudaMemsetAsync (checksum)");
  };
  steps.body = [&](cudaStream_t s) { launch_read(shape, src.get(), spec.bytes, ctx.sum, s); };
  steps.after = [&] {
    unsigned long long got = 0;
    check(cudaMemcpy(&got, ctx.sum, sizeof got, cudaMemcpyDeviceToHost), "cudaMemcpy (checksum)");
    ++runs;
    if (got != want && verdict.ok) {
      verdict.ok = false;
      verdict.text =
          "run " + std::to_string(runs) + ": checksum " + hex(got) + " != expected " + hex(want);
    }
  };
  const bool completed = run_timed(spec, steps, ctx.stream, ctx.result);
  if (verdict.ok) {
    verdict.text = "checksum " + hex(want) + " matches in all " + std::to_string(runs) + " runs";
  }
  finish(ctx, completed, verdict);
}

void run_write(Context& ctx) {
  const CaseSpec& spec = ctx.spec;
  Buffer dst(spec.allocator, spec.bytes);
  advise(dst, ctx.facts);
  fill_poison(dst, ctx.facts, ctx.stream);

  const Shape shape = write_shape(ctx.facts, spec.bytes);
  ctx.result.grid_blocks = shape.grid;
  ctx.result.block_threads = shape.block;
  ctx.result.kernel = kWriteId;
  ctx.result.traffic_bytes_per_sample = spec.bytes * launches(spec);

  RunSteps steps;
  steps.body = [&](cudaStream_t s) { launch_write(shape, dst.get(), spec.bytes, kWriteSeed, s); };
  const bool completed = run_timed(spec, steps, ctx.stream, ctx.result);
  if (spec.inject_corruption)
    corrupt_one_byte(dst);
  const Verdict verdict = completed ? validate_pattern(dst.get(), spec.bytes, kWriteSeed, ctx.facts,
                                                       ctx.sum, ctx.stream)
                                    : Verdict{};
  finish(ctx, completed, verdict);
}

// copy (the copy kernel) and memcpy_d2d (cudaMemcpyAsync) share everything but the body.
void run_copy(Context& ctx) {
  const CaseSpec& spec = ctx.spec;
  Buffer src(spec.allocator, spec.bytes);
  Buffer dst(spec.allocator, spec.bytes);
  advise(src, ctx.facts);
  advise(dst, ctx.facts);
  fill_pattern(src, kCopySeed, ctx.facts, ctx.stream);
  fill_poison(dst, ctx.facts, ctx.stream);
  if (spec.inject_corruption)
    corrupt_one_byte(src);
  ctx.result.traffic_bytes_per_sample = 2 * spec.bytes * launches(spec);

  RunSteps steps;
  Shape shape;
  std::optional<Buffer> sync;  // the bulk kernels' lockstep state, zeroed once
  if (spec.operation == Operation::copy) {
    const CopyLaunch copy = plan_copy(ctx.facts, spec.bytes);
    shape = copy.shape;
    ctx.result.kernel = copy_kernel_id(copy.path);
    sync.emplace(Allocator::device, sizeof(detail::BulkCopySync));
    auto* state = static_cast<detail::BulkCopySync*>(sync->get());
    check(cudaMemsetAsync(state, 0, sizeof *state, ctx.stream), "cudaMemsetAsync (lockstep)");
    steps.body = [&, copy, state](cudaStream_t s) {
      launch_copy(copy, src.get(), dst.get(), spec.bytes, state, s);
    };
  } else {
    ctx.result.kernel = "cudaMemcpyAsync/d2d";
    steps.body = [&](cudaStream_t s) {
      check(cudaMemcpyAsync(dst.get(), src.get(), spec.bytes, cudaMemcpyDeviceToDevice, s),
            "cudaMemcpyAsync");
    };
  }
  ctx.result.grid_blocks = shape.grid;
  ctx.result.block_threads = shape.block;
  const bool completed = run_timed(spec, steps, ctx.stream, ctx.result);
  const Verdict verdict =
      completed ? validate_pattern(dst.get(), spec.bytes, kCopySeed, ctx.facts, ctx.sum, ctx.stream)
                : Verdict{};
  finish(ctx, completed, verdict);
}

std::string check_spec(const CaseSpec& spec) {
  if (spec.bytes == 0)
    return "invalid case: bytes must be at least 1";
  if (spec.samples < 1)
    return "invalid case: samples must be at least 1";
  if (spec.warmup_runs < 0)
    return "invalid case: warmup_runs must not be negative";
  if (spec.launches_per_sample < 1)
    return "invalid case: launches_per_sample must be at least 1";
  return "";
}

int buffers_needed(Operation operation) {
  return operation == Operation::copy || operation == Operation::memcpy_d2d ? 2 : 1;
}

// run_case without the exception boundary.
void run_case_or_throw(const CaseSpec& spec, CaseResult& result) {
  const std::string invalid = check_spec(spec);
  if (!invalid.empty())
    throw CaseFailure(invalid);
  const int devices = device_count();
  if (spec.device < 0 || spec.device >= devices) {
    throw CaseFailure("no CUDA device " + std::to_string(spec.device) + " (" +
                      std::to_string(devices) + " found)");
  }
  const DeviceGuard guard;
  check(cudaSetDevice(spec.device), ("cudaSetDevice(" + std::to_string(spec.device) + ")").c_str());
  const DeviceFacts facts = query_device(spec.device);
  result.device_name = facts.name;
  if (std::string why = waiver(spec, facts); !why.empty()) {
    result.status = CaseStatus::waived;
    result.reason = std::move(why);
    return;
  }
  check_capacity(spec.allocator, spec.bytes * buffers_needed(spec.operation));
  const Stream stream;
  const Buffer sum(Allocator::device, sizeof(unsigned long long));
  Context ctx{spec, facts, stream.get(), static_cast<unsigned long long*>(sum.get()), result};
  switch (spec.operation) {
    case Operation::read:
      run_read(ctx);
      break;
    case Operation::write:
      run_write(ctx);
      break;
    case Operation::copy:
    case Operation::memcpy_d2d:
      run_copy(ctx);
      break;
  }
}

}  // namespace

bool built_with_cuda() {
  return true;
}

int device_count() {
  return probe_devices().count;
}

DeviceProbe probe_devices() {
  DeviceProbe probe;
  const cudaError_t err = cudaGetDeviceCount(&probe.count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // cudaErrorInsufficientDriver, cudaErrorNoDevice, ...: no usable GPU
    probe.count = 0;
    probe.error = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err) + " (" +
                  cudaGetErrorName(err) + ")";
  }
  return probe;
}

CaseResult run_case(const CaseSpec& spec) {
  CaseResult result;
  try {
    run_case_or_throw(spec, result);
  } catch (const std::exception& e) {  // CaseFailure, std::bad_alloc
    result.status = CaseStatus::failed;
    result.reason = e.what();
    result.validated = false;
  }
  return result;
}

}  // namespace gb10tune::kernels
