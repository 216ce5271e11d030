#include "gb10tune/sys/cpuinfo.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <span>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::sys {

namespace {

struct ArmCore {
  std::uint32_t implementer;
  std::uint32_t part;
  std::string_view name;
  std::string_view arch;
};

// Cores seen in machines people run llama.cpp on; the arch column is the ISA level the core
// implements, as GCC's -march spells it.
constexpr std::array kArmCores{
    ArmCore{0x41, 0xd03, "Cortex-A53", "armv8-a"},
    ArmCore{0x41, 0xd05, "Cortex-A55", "armv8.2-a"},
    ArmCore{0x41, 0xd08, "Cortex-A72", "armv8-a"},
    ArmCore{0x41, 0xd0b, "Cortex-A76", "armv8.2-a"},
    ArmCore{0x41, 0xd0c, "Neoverse N1", "armv8.2-a"},
    ArmCore{0x41, 0xd0d, "Cortex-A77", "armv8.2-a"},
    ArmCore{0x41, 0xd40, "Neoverse V1", "armv8.4-a"},
    ArmCore{0x41, 0xd41, "Cortex-A78", "armv8.2-a"},
    ArmCore{0x41, 0xd42, "Cortex-A78AE", "armv8.2-a"},
    ArmCore{0x41, 0xd44, "Cortex-X1", "armv8.2-a"},
    ArmCore{0x41, 0xd46, "Cortex-A510", "armv9-a"},
    ArmCore{0x41, 0xd47, "Cortex-A710", "armv9-a"},
    ArmCore{0x41, 0xd48, "Cortex-X2", "armv9-a"},
    ArmCore{0x41, 0xd49, "Neoverse N2", "armv9-a"},
    ArmCore{0x41, 0xd4d, "Cortex-A715", "armv9-a"},
    ArmCore{0x41, 0xd4e, "Cortex-X3", "armv9-a"},
    ArmCore{0x41, 0xd4f, "Neoverse V2", "armv9-a"},
    ArmCore{0x41, 0xd80, "Cortex-A520", "armv9.2-a"},
    ArmCore{0x41, 0xd81, "Cortex-A720", "armv9.2-a"},
    ArmCore{0x41, 0xd82, "Cortex-X4", "armv9.2-a"},
    ArmCore{0x41, 0xd84, "Neoverse V3", "armv9.2-a"},
    ArmCore{0x41, 0xd85, "Cortex-X925", "armv9.2-a"},
    ArmCore{0x41, 0xd87, "Cortex-A725", "armv9.2-a"},
    ArmCore{0x41, 0xd8e, "Neoverse N3", "armv9.2-a"},
    ArmCore{0x48, 0xd01, "Kunpeng 920", "armv8.2-a"},
    ArmCore{0x4e, 0x004, "Carmel", "armv8.2-a"},
    ArmCore{0xc0, 0xac3, "Ampere-1", "armv8.6-a"},
    ArmCore{0xc0, 0xac4, "Ampere-1a", "armv8.6-a"},
};

// Kernel flag name → toolchain feature name; the order is the order features are listed.
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kArmFeatures{{
    {"asimddp", "dotprod"},
    {"i8mm", "i8mm"},
    {"bf16", "bf16"},
    {"sve", "sve"},
    {"sve2", "sve2"},
    {"asimdhp", "fp16"},
    {"sme", "sme"},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kX86Features{{
    {"avx", "avx"},
    {"avx2", "avx2"},
    {"fma", "fma"},
    {"f16c", "f16c"},
    {"avx_vnni", "avxvnni"},
    {"avx512f", "avx512f"},
    {"avx512bw", "avx512bw"},
    {"avx512vl", "avx512vl"},
    {"avx512_vnni", "avx512vnni"},
    {"avx512_bf16", "avx512bf16"},
    {"avx512_vbmi", "avx512vbmi"},
    {"amx_tile", "amx-tile"},
    {"amx_int8", "amx-int8"},
    {"amx_bf16", "amx-bf16"},
}};

using Block = std::map<std::string, std::string, std::less<>>;

std::vector<Block> parse_blocks(std::string_view text) {
  std::vector<Block> blocks;
  Block current;
  for (std::string_view line : split(text, '\n')) {
    const std::string_view stripped = trim(line);
    if (stripped.empty()) {
      if (!current.empty()) {
        blocks.push_back(std::move(current));
        current.clear();
      }
      continue;
    }
    const std::size_t colon = stripped.find(':');
    if (colon == std::string_view::npos) {
      continue;  // odd line: skipped, the rest of the block still counts
    }
    current[std::string(trim(stripped.substr(0, colon)))] =
        std::string(trim(stripped.substr(colon + 1)));
  }
  if (!current.empty()) {
    blocks.push_back(std::move(current));
  }
  return blocks;
}

std::string block_value(const Block& block, std::string_view key) {
  const auto it = block.find(key);
  return it == block.end() ? std::string() : it->second;
}

std::set<std::string> flag_set(const std::string& list) {
  std::set<std::string> flags;
  for (std::string_view word : split_words(list)) {
    flags.emplace(word);
  }
  return flags;
}

}  // namespace

std::string_view arm_core_name(std::uint32_t implementer, std::uint32_t part) {
  for (const ArmCore& core : kArmCores) {
    if (core.implementer == implementer && core.part == part) {
      return core.name;
    }
  }
  return {};
}

std::string_view arm_core_arch(std::uint32_t implementer, std::uint32_t part) {
  for (const ArmCore& core : kArmCores) {
    if (core.implementer == implementer && core.part == part) {
      return core.arch;
    }
  }
  return {};
}

Expected<CpuInfo> parse_cpuinfo(std::string_view text, std::string_view source) {
  CpuInfo info;
  std::string x86_model;
  for (const Block& block : parse_blocks(text)) {
    if (block.find("processor") == block.end()) {
      continue;  // a trailer block ("Hardware", "Serial") or junk
    }
    ++info.logical_cpus;
    CoreCluster core;
    const std::string implementer = block_value(block, "CPU implementer");
    if (!implementer.empty()) {
      info.family = CpuFamily::arm;
      core.implementer = static_cast<std::uint32_t>(parse_u64(implementer).value_or(0));
      core.part = static_cast<std::uint32_t>(parse_u64(block_value(block, "CPU part")).value_or(0));
      core.name = std::string(arm_core_name(core.implementer, core.part));
      if (core.name.empty()) {
        core.name =
            fmt::format("ARM core (implementer {:#x}, part {:#x})", core.implementer, core.part);
      }
      core.flags = flag_set(block_value(block, "Features"));
    } else {
      const std::string flags = block_value(block, "flags");
      if (!flags.empty() || !block_value(block, "vendor_id").empty()) {
        info.family = CpuFamily::x86;
      }
      core.name = block_value(block, "model name");
      if (core.name.empty()) {
        core.name = "unknown CPU";
      }
      core.flags = flag_set(flags.empty() ? block_value(block, "Features") : flags);
    }
    auto same = [&](const CoreCluster& c) {
      return c.name == core.name && c.implementer == core.implementer && c.part == core.part;
    };
    auto it = std::find_if(info.clusters.begin(), info.clusters.end(), same);
    if (it == info.clusters.end()) {
      core.cores = 1;
      info.clusters.push_back(std::move(core));
    } else {
      ++it->cores;
      // A cluster's flags are those all of its cores report.
      std::set<std::string> both;
      std::set_intersection(it->flags.begin(), it->flags.end(), core.flags.begin(),
                            core.flags.end(), std::inserter(both, both.end()));
      it->flags = std::move(both);
    }
  }
  if (info.logical_cpus == 0) {
    return Error{
        fmt::format("{} lists no processor (the file is empty, truncated or not a "
                    "cpuinfo file); check the path or the --sysroot capture",
                    source)};
  }

  info.common_flags = info.clusters.front().flags;
  for (const CoreCluster& cluster : info.clusters) {
    std::set<std::string> both;
    std::set_intersection(info.common_flags.begin(), info.common_flags.end(), cluster.flags.begin(),
                          cluster.flags.end(), std::inserter(both, both.end()));
    info.common_flags = std::move(both);
  }
  using FeatureTable = std::span<const std::pair<std::string_view, std::string_view>>;
  const FeatureTable table = info.family == CpuFamily::arm   ? FeatureTable(kArmFeatures)
                             : info.family == CpuFamily::x86 ? FeatureTable(kX86Features)
                                                             : FeatureTable();
  for (const auto& [flag, feature] : table) {
    if (info.common_flags.count(std::string(flag)) != 0) {
      info.features.emplace_back(feature);
    }
  }

  std::vector<std::string> parts;
  for (const CoreCluster& cluster : info.clusters) {
    parts.push_back(info.clusters.size() == 1 && info.family != CpuFamily::arm
                        ? cluster.name
                        : fmt::format("{}x {}", cluster.cores, cluster.name));
  }
  info.model = fmt::format("{}", fmt::join(parts, " + "));
  return info;
}

Expected<CpuInfo> read_cpuinfo(const platform::Sysroot& root) {
  const auto text = root.read_file("/proc/cpuinfo");
  if (!text) {
    return text.error();
  }
  return parse_cpuinfo(*text, root.resolve("/proc/cpuinfo").string());
}

}  // namespace gb10tune::sys
