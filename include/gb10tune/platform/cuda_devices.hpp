// Device facts from the CUDA runtime (linked statically, so a machine without a driver is a
// normal "no-driver" answer, not a failure to start).
#pragma once

#include "gb10tune/platform/gpu_facts.hpp"

namespace gb10tune::platform {

// Asks the CUDA runtime for every device; never throws. In a build without CUDA the status
// is built_without_cuda.
GpuReport query_cuda_devices();

}  // namespace gb10tune::platform
