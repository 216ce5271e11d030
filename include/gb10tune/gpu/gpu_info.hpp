// What GPU facts mean for llama.cpp (K1, K3, K19). The facts are filled by a GpuBackend (the
// CUDA runtime and NVML on a real machine, a fake in tests).
#pragma once

#include <string>
#include <string_view>

#include "gb10tune/platform/gpu_facts.hpp"

namespace gb10tune::gpu {

// The facts themselves are platform's (what it reads from the CUDA runtime and NVML).
using platform::GpuDevice;
using platform::GpuMemory;
using platform::GpuProcessMemory;
using platform::GpuReading;
using platform::GpuReport;
using platform::GpuStatus;
using platform::NvmlReport;

// The kind of GPU, in plain words for the user.
enum class GpuKind {
  gb10,        // NVIDIA GB10 (DGX Spark): integrated, unified LPDDR5x
  integrated,  // another integrated GPU (Jetson and the like)
  discrete,    // a GPU with its own memory
};

// Classifies one device: GB10 by name, or an integrated device of compute capability 12.1.
GpuKind classify(const GpuDevice& device);

// "GB10 (integrated, unified memory)", "integrated GPU (unified memory)", "discrete GPU".
std::string_view describe(GpuKind kind);

// "available", "no-device", "no-driver", "built-without-cuda", "error" (stable JSON ids).
std::string_view to_string(GpuStatus status);

// A one-line reason for the user when there is no usable GPU ("no GPU: built without CUDA").
std::string no_gpu_reason(const GpuReport& report);

// The nominal memory bandwidth in bytes/s: from a table of known devices first (GB10
// 273 GB/s, H100 SXM 3.35 TB/s, H200 4.8 TB/s, …), else from memory clock × bus width,
// else 0.
double nominal_bandwidth(const GpuDevice& device);

// Where nominal_bandwidth's figure comes from: "table", "memory clock x bus width" or
// "unknown".
std::string_view nominal_bandwidth_source(const GpuDevice& device);

// The compute capability as CMake spells an architecture for this device: "121a-real" for
// 12.x and newer (arch-specific features), "90-real" otherwise.
std::string cuda_architecture(const GpuDevice& device);

// The CUDA version as "13.0" from 13000; "" for 0.
std::string format_cuda_version(int version);

}  // namespace gb10tune::gpu
