// /proc/cpuinfo: CPU model, cores, clusters (ARM implementer/part) and the feature flags
// that decide how llama.cpp should be built (K11).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::sys {

enum class CpuFamily { arm, x86, other };

// A group of identical cores (on ARM: same implementer, part; on x86: same model name).
struct CoreCluster {
  std::string name;               // "Cortex-X925", or the x86 model name
  std::uint32_t implementer = 0;  // ARM only, 0 elsewhere
  std::uint32_t part = 0;         // ARM only
  int cores = 0;
  std::set<std::string> flags;  // the kernel's flag names as listed ("asimddp", "avx2")
};

struct CpuInfo {
  CpuFamily family = CpuFamily::other;
  std::string model;  // a one-line description: "10x Cortex-X925 + 10x Cortex-A725"
  int logical_cpus = 0;
  std::vector<CoreCluster> clusters;
  // Flags every core has (the ones a build may rely on), as the kernel names them.
  std::set<std::string> common_flags;
  // Toolchain-level features derived from common_flags: "dotprod", "i8mm", "bf16", "sve",
  // "sve2", "fp16" on ARM; "avx2", "avx512f", … on x86.
  std::vector<std::string> features;
};

// Parses the text of /proc/cpuinfo. An Error naming `source` when no processor entry can be
// recognised (empty or truncated file).
Expected<CpuInfo> parse_cpuinfo(std::string_view text, std::string_view source);

// Reads and parses /proc/cpuinfo under `root`.
Expected<CpuInfo> read_cpuinfo(const platform::Sysroot& root);

// The marketing name of an ARM core ("Cortex-X925" for 0x41/0xd85), or "" when unknown.
std::string_view arm_core_name(std::uint32_t implementer, std::uint32_t part);

// The architecture level an ARM core implements ("armv9.2-a"), or "" when unknown.
std::string_view arm_core_arch(std::uint32_t implementer, std::uint32_t part);

}  // namespace gb10tune::sys
