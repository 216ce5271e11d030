// What the CUDA runtime and NVML report, as plain data: filled by platform (cuda_devices.hpp,
// nvml.hpp), interpreted by the core (gpu/gpu_info.hpp, where the same types are named gpu::…).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gb10tune::platform {

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

// One GPU's sensors as NVML reads them at one moment (nvmlDeviceGetName, …GetTemperature,
// …GetPowerUsage, …GetEnforcedPowerLimit, …GetMemoryInfo). A figure the device or the driver
// does not give (NVML_ERROR_NOT_SUPPORTED, a symbol the library lacks, any other error) is
// nullopt, never 0: a GB10 has no dedicated memory to report (K3).
struct GpuReading {
  int nvml_index = 0;
  std::string name;                           // "NVIDIA H200"; "" when NVML does not name it
  std::optional<double> temperature_celsius;  // the GPU die (NVML_TEMPERATURE_GPU)
  std::optional<double> power_watts;          // the board's draw now
  std::optional<double> power_limit_watts;    // the limit the driver enforces
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<std::uint64_t> memory_total_bytes;
};

// What NVML (loaded at run time) says; its absence is a normal answer.
struct NvmlReport {
  bool loaded = false;
  std::string detail;          // why it is not loaded, or the library it loaded
  std::string driver_version;  // "580.95.05"
  std::vector<GpuProcessMemory> processes;
  std::vector<GpuMemory> memory;  // one entry per GPU that reported its memory
};

}  // namespace gb10tune::platform
