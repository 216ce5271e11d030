// The llama.cpp build line for this machine, derived from the CPU's real flags and the
// GPU's compute capability (K11).
#pragma once

#include <string>
#include <vector>

#include "gb10tune/gpu/gpu_info.hpp"
#include "gb10tune/sys/cpuinfo.hpp"

namespace gb10tune::probe {

struct BuildAdvice {
  std::vector<std::string> cmake_definitions;   // "-DGGML_CUDA=ON", … in the order printed
  std::string arm_arch;                         // "armv9.2-a+dotprod+i8mm+bf16+sve2"; "" off ARM
  std::vector<std::string> cuda_architectures;  // "121a-real"; empty without a GPU
  std::string configure_command;                // cmake -B build …
  std::string build_command;                    // cmake --build build …
};

// The -march value for GGML_CPU_ARM_ARCH: the lowest ISA level of all core clusters plus the
// features every core has (dotprod, i8mm, bf16, sve2 or else sve). "" when not ARM.
std::string arm_march(const sys::CpuInfo& cpu);

// The build line for `cpu` and the devices of `gpus` (CPU-only when there is no device).
BuildAdvice make_build_advice(const sys::CpuInfo& cpu, const gpu::GpuReport& gpus);

}  // namespace gb10tune::probe
