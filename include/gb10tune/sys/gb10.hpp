// Whether this machine is a GB10 (DGX Spark), cheaply: without initializing CUDA.
#pragma once

#include <cstddef>

#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::sys {

// True when the NVIDIA driver names a GB10 in /proc/driver/nvidia/gpus/*/information, or,
// without that file, when the CPU is the GB10's (Cortex-X925 + Cortex-A725 clusters).
bool is_gb10_machine(const platform::Sysroot& root);

// How many GPUs the NVIDIA driver lists in /proc/driver/nvidia/gpus (0: no driver, no GPU).
std::size_t nvidia_gpu_count(const platform::Sysroot& root);

}  // namespace gb10tune::sys
