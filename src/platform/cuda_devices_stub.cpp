#include "gb10tune/platform/cuda_devices.hpp"

namespace gb10tune::platform {

gpu::GpuReport query_cuda_devices() {
  gpu::GpuReport report;
  report.status = gpu::GpuStatus::built_without_cuda;
  report.detail = "not available: built without CUDA";
  return report;
}

}  // namespace gb10tune::platform
