#include "gb10tune/probe/build_advice.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "gb10tune/util/shell_quote.hpp"

namespace gb10tune::probe {

namespace {

// (major, minor) of "armv9.2-a"; (0, 0) for anything else.
std::pair<int, int> arch_level(std::string_view arch) {
  int major = 0;
  int minor = 0;
  if (std::sscanf(std::string(arch).c_str(), "armv%d.%d-a", &major, &minor) == 2) {
    return {major, minor};
  }
  if (std::sscanf(std::string(arch).c_str(), "armv%d-a", &major) == 1) {
    return {major, 0};
  }
  return {0, 0};
}

// The ISA level implied by the features alone, for cores missing from the table.
std::string_view arch_from_features(const sys::CpuInfo& cpu) {
  auto has = [&](std::string_view f) {
    return std::find(cpu.features.begin(), cpu.features.end(), f) != cpu.features.end();
  };
  if (has("sve2")) {
    return "armv9-a";
  }
  if (has("i8mm") || has("bf16")) {
    return "armv8.6-a";
  }
  if (has("dotprod")) {
    return "armv8.2-a";
  }
  return "armv8-a";
}

}  // namespace

std::string arm_march(const sys::CpuInfo& cpu) {
  if (cpu.family != sys::CpuFamily::arm) {
    return {};
  }
  std::string_view base;
  for (const sys::CoreCluster& cluster : cpu.clusters) {
    std::string_view arch = sys::arm_core_arch(cluster.implementer, cluster.part);
    if (arch.empty()) {
      arch = arch_from_features(cpu);
    }
    if (base.empty() || arch_level(arch) < arch_level(base)) {
      base = arch;  // every core must run the code: the lowest level wins
    }
  }
  std::string march(base.empty() ? "armv8-a" : base);
  auto has = [&](std::string_view f) {
    return std::find(cpu.features.begin(), cpu.features.end(), f) != cpu.features.end();
  };
  for (std::string_view feature : {"dotprod", "i8mm", "bf16"}) {
    if (has(feature)) {
      march += fmt::format("+{}", feature);
    }
  }
  if (has("sve2")) {
    march += "+sve2";  // implies sve
  } else if (has("sve")) {
    march += "+sve";
  }
  return march;
}

BuildAdvice make_build_advice(const sys::CpuInfo& cpu, const gpu::GpuReport& gpus) {
  BuildAdvice advice;
  for (const gpu::GpuDevice& device : gpus.devices) {
    const std::string arch = gpu::cuda_architecture(device);
    if (std::find(advice.cuda_architectures.begin(), advice.cuda_architectures.end(), arch) ==
        advice.cuda_architectures.end()) {
      advice.cuda_architectures.push_back(arch);
    }
  }
  auto& defs = advice.cmake_definitions;
  if (!advice.cuda_architectures.empty()) {
    defs.push_back("-DGGML_CUDA=ON");
    defs.push_back(
        fmt::format("-DCMAKE_CUDA_ARCHITECTURES={}", fmt::join(advice.cuda_architectures, ";")));
  }
  advice.arm_arch = arm_march(cpu);
  if (!advice.arm_arch.empty()) {
    // GGML_CPU_ARM_ARCH is only honoured with GGML_NATIVE off.
    defs.push_back("-DGGML_NATIVE=OFF");
    defs.push_back(fmt::format("-DGGML_CPU_ARM_ARCH={}", advice.arm_arch));
  } else {
    defs.push_back("-DGGML_NATIVE=ON");
  }
  if (!advice.cuda_architectures.empty()) {
    defs.push_back("-DGGML_CUDA_GRAPHS=ON");
  }
  defs.push_back("-DCMAKE_BUILD_TYPE=Release");

  // A list value holds ';', which a shell would take as a command separator.
  advice.configure_command = "cmake -B build " + shell_join(defs);
  advice.build_command = fmt::format(
      "cmake --build build --config Release -j {} --target "
      "llama-server",
      std::max(1, cpu.logical_cpus));
  return advice;
}

}  // namespace gb10tune::probe
