// GPU facts as plain data, and what they mean for llama.cpp (K1, K3, K19). Filled by a
// GpuBackend (the CUDA runtime and NVML on a real machine, a fake in tests).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gb10tune::gpu {

// One CUDA device as the runtime describes it.
struct GpuDevice {
  int index = 0;
  std::string name;  // "NVIDIA GB10", "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t total_memory_bytes = 0;  // on GB10: the shared system pool as CUDA sees it
  int memory_clock_khz = 0;              // 0 when the device does not report it
  int memory_bus_width_bits = 0;         // 0 when the device does not report it
  bool integrated = false;               // shares memory with the CPU
  bool managed_memory = false;
  bool concurrent_managed_access = false;
  bool pageable_memory_access = false;  // the GPU can read plain malloc/mmap memory
  bool pageable_memory_access_uses_host_page_tables = false;
  std::string pci_bus_id;  // "0000:01:00.0", "" when unknown
};

// Why there is or is not a usable GPU.
enum class GpuStatus {
  available,           // at least one device
  no_device,           // driver present, no CUDA device
  no_driver,           // no NVIDIA driver (or one too old for this runtime)
  built_without_cuda,  // this gb10tune was built without the CUDA toolkit
  error,               // the runtime failed in another way; detail says how
};

// What the CUDA runtime says about this machine.
struct GpuReport {
  GpuStatus status = GpuStatus::built_without_cuda;
  std::string detail;              // the runtime's own words when status is not available
  int driver_cuda_version = 0;     // cudaDriverGetVersion: 13000 = CUDA 13.0, 0 when none
  int runtime_version = 0;         // cudaRuntimeGetVersion of the linked runtime
  std::vector<GpuDevice> devices;  // empty unless status == available
};

// Memory a process holds on a GPU, as NVML accounts it (K3: on GB10 managed memory is not
// counted here).
struct GpuProcessMemory {
  int device_index = 0;  // NVML's index of the device
  std::uint32_t pid = 0;
  std::uint64_t used_bytes = 0;  // 0 when not known
  // false: NVML listed the process but did not give its memory (NVML_VALUE_NOT_AVAILABLE)
  bool used_known = true;
};

// One GPU's memory as NVML reports it (nvmlDeviceGetMemoryInfo): what a discrete GPU's
// budget starts from. On GB10 NVML has no figure (K3); the budget there is MemAvailable.
struct GpuMemory {
  int nvml_index = 0;
  std::string pci_bus_id;  // "0000:19:00.0", the key to the CUDA device of the same GPU
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
  // false: NVML could not list the device's compute processes (per-process figures unknown)
  bool processes_listed = true;
};

// What NVML (loaded at run time) says; its absence is a normal answer.
struct NvmlReport {
  bool loaded = false;
  std::string detail;          // why it is not loaded, or the library it loaded
  std::string driver_version;  // "580.95.05"
  std::vector<GpuProcessMemory> processes;
  std::vector<GpuMemory> memory;  // one entry per GPU that reported its memory
};

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
