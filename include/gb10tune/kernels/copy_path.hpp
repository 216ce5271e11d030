// Which copy kernel a device gets (docs/bandwidth-kernels.md, "Copy, third attempt"): the
// bulk-copy pipeline in lockstep where the kernel was compiled for sm_90 or later and the
// shared memory allows, else the 16-byte copy. Plain C++, host-side, no CUDA: exposed so that
// the choice and the launch shape are tested without a GPU.
#pragma once

#include <cstdint>
#include <string_view>

namespace gb10tune::kernels {

// The copy kernels, best first.
enum class CopyPath {
  bulk_wide,     // bulk copies (TMA), 40 KiB chunks, 5 stages, 3 loads ahead (H100/H200)
  bulk_compact,  // 32 KiB chunks, 3 stages, 1 load ahead: fits ~100 KiB of shared memory (GB10)
  vector,        // 16-byte loads and stores from every thread (any GPU)
};

// Shape of a bulk path: block b copies chunks b, b + grid, b + 2 grid, ... through `stages`
// shared buffers, `ahead` loads in flight before the stores; a block issues its k-th chunk only
// once every block issued its (k - lag)-th (lockstep).
struct BulkShape {
  int chunk_bytes = 0;
  int stages = 0;
  int ahead = 0;
  int lag = 0;
};

// The shape of `path` (all zero for vector).
constexpr BulkShape bulk_shape(CopyPath path) {
  switch (path) {
    case CopyPath::bulk_wide:
      return {40 * 1024, 5, 3, 2};
    case CopyPath::bulk_compact:
      return {32 * 1024, 3, 1, 2};
    case CopyPath::vector:
      break;
  }
  return {};
}

// Dynamic shared memory the path's kernel needs per block (0 for vector).
constexpr std::uint64_t bulk_shared_bytes(CopyPath path) {
  const BulkShape s = bulk_shape(path);
  return static_cast<std::uint64_t>(s.chunk_bytes) * static_cast<std::uint64_t>(s.stages);
}

// The path for a device: `kernel_ptx_version` is the virtual architecture the bulk kernel's code
// on this device came from (cudaFuncAttributes::ptxVersion, e.g. 90; below 90 the bulk
// instructions are absent), `max_shared_optin` the most dynamic shared memory a block may ask for
// (cudaDevAttrMaxSharedMemoryPerBlockOptin) less the kernel's static shared memory.
CopyPath choose_copy_path(int kernel_ptx_version, std::uint64_t max_shared_optin);

// Blocks for a bulk copy of `bytes` on `path`: one per resident slot (`sm_count` x
// `blocks_per_sm`), but no more than there are whole chunks, and at least 1 (the remainder is
// copied by every thread).
int bulk_grid(CopyPath path, int sm_count, int blocks_per_sm, std::uint64_t bytes);

// Stable id of the path's kernel, as reported in CaseResult::kernel.
std::string_view copy_kernel_id(CopyPath path);

}  // namespace gb10tune::kernels
