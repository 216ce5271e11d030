#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "gb10tune/server/system_info.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/verify/checks.hpp"

namespace gb10tune::verify {

namespace {

// A CPU feature (as sys::CpuInfo::features names it) and the name ggml's system_info line
// gives it when the build uses it.
struct FeatureName {
  std::string_view cpu;
  std::string_view ggml;
};

constexpr std::array<FeatureName, 3> kArmFeatures{{
    {"dotprod", "DOTPROD"},
    {"i8mm", "MATMUL_INT8"},
    {"sve", "SVE"},
}};

constexpr std::array<FeatureName, 4> kX86Features{{
    {"avx2", "AVX2"},
    {"fma", "FMA"},
    {"f16c", "F16C"},
    {"avx512f", "AVX512"},
}};

constexpr std::string_view kSystemInfo = "system_info:";
constexpr std::string_view kCacheSkip = "exceeds cache size limit";

std::size_t count_occurrences(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

}  // namespace

std::vector<std::string> parse_system_info_features(std::string_view line) {
  std::vector<std::string> features;
  for (std::string_view field : split(line, '|')) {
    const std::size_t eq = field.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    std::string_view name = trim(field.substr(0, eq));
    // "CPU : NEON = 1" carries the backend's name before the first feature.
    if (const std::size_t colon = name.rfind(':'); colon != std::string_view::npos) {
      name = trim(name.substr(colon + 1));
    }
    if (trim(field.substr(eq + 1)) == "1" && !name.empty()) {
      features.emplace_back(name);
    }
  }
  return features;
}

std::vector<Finding> check_log(std::string_view log_text, std::string_view log_name,
                               const sys::CpuInfo* cpu, const LogCheckSources& sources) {
  std::vector<Finding> findings;
  Finding build;
  build.id = "cpu-features-in-build";
  build.fact = "K11";
  build.summary = "llama.cpp built for this CPU's features";

  // Builds of 2026-08 open each start with a marker and print system_info only at -lv 4: the
  // line must come from this start, not from an earlier one of the appended-to log.
  const std::string_view this_run = server::last_run_of_log(log_text);
  std::string line;
  std::string source;
  std::string binary_error;
  if (const auto logged = server::find_system_info_line(this_run)) {
    line = std::string(*logged);
    source = fmt::format("this start's log {}", log_name);
  } else if (sources.binary_system_info) {
    if (auto probed = sources.binary_system_info()) {
      line = std::move(probed).value();
      source = "the server's binary run at -lv 4";
    } else {
      binary_error = probed.error().message;
    }
  }
  if (line.empty()) {
    build.severity = Severity::warn;
    build.evidence = fmt::format(
        "unknown: no '{}' line in {} since the server started (builds of 2026-08 print it only "
        "at -lv 4){}",
        kSystemInfo, log_name, binary_error.empty() ? "" : "; " + binary_error);
    build.fix = sources.launched
                    ? "run verify as the server's user so that it can run the server's binary, "
                      "or add -lv 4 to the server's flags"
                    : "add -lv 4 to the server's flags, or check that --log-file names this "
                      "server's log";
  } else {
    const std::vector<std::string> built = parse_system_info_features(line);
    std::vector<std::string> missing;
    std::vector<std::string> present;
    if (cpu != nullptr) {
      const auto& table = cpu->family == sys::CpuFamily::arm
                              ? std::vector<FeatureName>(kArmFeatures.begin(), kArmFeatures.end())
                              : std::vector<FeatureName>(kX86Features.begin(), kX86Features.end());
      for (const FeatureName& feature : table) {
        const bool cpu_has = std::find(cpu->features.begin(), cpu->features.end(), feature.cpu) !=
                             cpu->features.end();
        const bool build_has = std::find(built.begin(), built.end(), feature.ggml) != built.end();
        if (cpu_has && !build_has) {
          missing.emplace_back(feature.ggml);
        } else if (cpu_has) {
          present.emplace_back(feature.ggml);
        }
      }
    }
    if (cpu == nullptr) {
      build.severity = Severity::warn;
      build.evidence = "the CPU's features could not be read (/proc/cpuinfo)";
    } else if (!missing.empty()) {
      build.severity = Severity::fail;
      build.evidence = fmt::format(
          "the CPU has {} but the build's system_info line (from {}) lacks them: the "
          "GGML_NATIVE trap (a native build fell back to a baseline architecture)",
          fmt::join(missing, ", "), source);
      build.fix = cpu->family == sys::CpuFamily::arm
                      ? "rebuild llama.cpp with -DGGML_NATIVE=OFF and the architecture spelled "
                        "out (gb10tune probe prints the line), e.g. "
                        "-DGGML_CPU_ARM_ARCH=armv9.2-a+dotprod+i8mm+bf16+sve2"
                      : "rebuild llama.cpp for this CPU (gb10tune probe prints the build line)";
    } else {
      build.evidence = present.empty() ? std::string("no CPU features to compare")
                                       : fmt::format("system_info from {} lists {}", source,
                                                     fmt::join(present, ", "));
    }
  }
  findings.push_back(std::move(build));

  Finding cache;
  cache.id = "prompt-cache-skips";
  cache.fact = "K8";
  cache.summary = "prompt states fit the prompt cache";
  const std::size_t skips = count_occurrences(this_run, kCacheSkip);
  if (skips > 0) {
    cache.severity = Severity::warn;
    cache.evidence = fmt::format(
        "'{}' {} time{} in {} since the server started: each skip means a full re-prefill of "
        "that session",
        kCacheSkip, skips, skips == 1 ? "" : "s", log_name);
    cache.fix =
        "run with -kvu (one unified KV pool) and --cache-ram large enough (24576 MiB "
        "held 93 → 2 skips in the report)";
  } else {
    cache.evidence = fmt::format("no '{}' in {}", kCacheSkip, log_name);
  }
  findings.push_back(std::move(cache));
  return findings;
}

}  // namespace gb10tune::verify
