// The seam between gb10tune and the GPU stack: the real one talks to the CUDA runtime and
// NVML, tests pass a fake.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/gpu/gpu_info.hpp"
#include "gb10tune/platform/nvml.hpp"

namespace gb10tune::gpu {

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // Device facts; never throws: no driver, no device or no CUDA are reported in the status.
  virtual GpuReport query_devices() = 0;
  // Driver version and per-process memory from NVML; never throws.
  virtual NvmlReport query_nvml() = 0;
  // The memory NVML accounts to `pid` over all GPUs (0: listed nowhere), for a caller that
  // asks every second (`watch`): the system backend keeps NVML loaded between calls, where
  // query_nvml loads and unloads it. nullopt when NVML is not usable. Never throws.
  virtual std::optional<std::uint64_t> process_gpu_bytes(std::uint32_t pid) {
    const NvmlReport report = query_nvml();
    if (!report.loaded) {
      return std::nullopt;
    }
    std::uint64_t bytes = 0;
    for (const GpuProcessMemory& entry : report.processes) {
      bytes += entry.pid == pid ? entry.used_bytes : 0;
    }
    return bytes;
  }
  // Each GPU's sensors now (temperature, power, its limit, memory), for a caller that asks
  // every second (`watch`); a figure NVML does not give is nullopt. Empty when NVML is not
  // usable (and in a backend that does not read sensors). Never throws.
  virtual std::vector<GpuReading> gpu_readings() { return {}; }
};

// The backend of this build: CUDA runtime + NVML (dlopen of `nvml_library`, see
// platform::nvml_library), or one that answers "built without CUDA" (NVML is still tried).
std::unique_ptr<GpuBackend> make_system_backend(
    std::string nvml_library = std::string(platform::kNvmlDefaultLibrary));

}  // namespace gb10tune::gpu
