// /proc/meminfo: the memory figures that matter for planning (K3, K19: the budget is
// MemAvailable, not what CUDA or nvidia-smi call free).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::sys {

struct MemInfo {
  std::uint64_t total_bytes = 0;      // MemTotal
  std::uint64_t available_bytes = 0;  // MemAvailable (the planning budget)
  std::uint64_t free_bytes = 0;       // MemFree
  std::uint64_t cached_bytes = 0;     // Cached
  std::uint64_t buffers_bytes = 0;    // Buffers
  std::uint64_t swap_total_bytes = 0;
  std::uint64_t swap_free_bytes = 0;
  // Page cache as the kernel reports it: Cached + Buffers.
  std::uint64_t page_cache_bytes() const { return cached_bytes + buffers_bytes; }
};

// Parses the text of /proc/meminfo. MemTotal, MemAvailable and MemFree are required; a
// required line that is missing or not a number is an Error that names `source` and the
// line. Unknown or odd lines are skipped.
Expected<MemInfo> parse_meminfo(std::string_view text, std::string_view source);

// Reads and parses /proc/meminfo under `root`.
Expected<MemInfo> read_meminfo(const platform::Sysroot& root);

}  // namespace gb10tune::sys
