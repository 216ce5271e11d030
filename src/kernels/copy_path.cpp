// Choice of the copy kernel and its grid (include/gb10tune/kernels/copy_path.hpp).
#include "gb10tune/kernels/copy_path.hpp"

#include <algorithm>

namespace gb10tune::kernels {

CopyPath choose_copy_path(int kernel_ptx_version, std::uint64_t max_shared_optin) {
  if (kernel_ptx_version < 90)
    return CopyPath::vector;
  for (const CopyPath path : {CopyPath::bulk_wide, CopyPath::bulk_compact}) {
    if (bulk_shared_bytes(path) <= max_shared_optin)
      return path;
  }
  return CopyPath::vector;
}

int bulk_grid(CopyPath path, int sm_count, int blocks_per_sm, std::uint64_t bytes) {
  const std::uint64_t resident =
      static_cast<std::uint64_t>(std::max(sm_count, 1)) * std::max(blocks_per_sm, 1);
  const auto chunk = static_cast<std::uint64_t>(std::max(bulk_shape(path).chunk_bytes, 1));
  return static_cast<int>(std::clamp<std::uint64_t>(bytes / chunk, 1, resident));
}

std::string_view copy_kernel_id(CopyPath path) {
  switch (path) {
    case CopyPath::bulk_wide:
      return "copy/bulk_lockstep/40K/s5/a3/lag2";
    case CopyPath::bulk_compact:
      return "copy/bulk_lockstep/32K/s3/a1/lag2";
    case CopyPath::vector:
      return "copy/block_tile/u8/nc_el/ef";
  }
  return "?";
}

}  // namespace gb10tune::kernels
