// The seam between gb10tune and the GPU stack: the real one talks to the CUDA runtime and
// NVML, tests pass a fake.
#pragma once

#include <memory>

#include "gb10tune/gpu/gpu_info.hpp"

namespace gb10tune::gpu {

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // Device facts; never throws: no driver, no device or no CUDA are reported in the status.
  virtual GpuReport query_devices() = 0;
  // Driver version and per-process memory from NVML; never throws.
  virtual NvmlReport query_nvml() = 0;
};

// The backend of this build: CUDA runtime + NVML (dlopen), or one that answers
// "built without CUDA" (NVML is still tried).
std::unique_ptr<GpuBackend> make_system_backend();

}  // namespace gb10tune::gpu
