// The memory limit of the cgroup this process runs in, if any (a container or a systemd
// slice can cap memory below MemAvailable).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::sys {

struct CgroupMemory {
  std::string path;                          // the cgroup path ("/user.slice/…"), "" when unknown
  std::optional<std::uint64_t> limit_bytes;  // nullopt when unlimited or unknown
  std::optional<std::uint64_t> usage_bytes;  // memory.current, when readable
};

// Reads /proc/self/cgroup and the matching memory.max (cgroup v2) or
// memory.limit_in_bytes (v1) under `root`. Never fails: unknown means no limit found.
CgroupMemory read_cgroup_memory(const platform::Sysroot& root);

}  // namespace gb10tune::sys
