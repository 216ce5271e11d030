#include "gb10tune/platform/cuda_devices.hpp"

namespace gb10tune::platform {

GpuReport query_cuda_devices() {
  GpuReport report;
  report.status = GpuStatus::built_without_cuda;
  report.detail = "not available: built without CUDA";
  return report;
}

}  // namespace gb10tune::platform
