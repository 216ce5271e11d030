// The bandwidth API in a build without CUDA: no device, every case fails "not available".
#include "gb10tune/kernels/bandwidth.hpp"

namespace gb10tune::kernels {

bool built_with_cuda() {
  return false;
}

int device_count() {
  return 0;
}

DeviceProbe probe_devices() {
  return {0, "built without CUDA"};
}

CaseResult run_case(const CaseSpec& /*spec*/) {
  CaseResult result;
  result.status = CaseStatus::failed;
  result.reason = "not available: built without CUDA";
  return result;
}

}  // namespace gb10tune::kernels
