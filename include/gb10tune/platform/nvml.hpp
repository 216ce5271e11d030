// NVML, loaded at run time with dlopen (libnvidia-ml.so.1 ships with the driver, not with
// the toolkit): driver version and per-process GPU memory.
#pragma once

#include "gb10tune/gpu/gpu_info.hpp"

namespace gb10tune::platform {

// Loads NVML, reads the driver version and the compute processes of every device, and
// unloads it. A missing library or a failing call is reported in the result, never thrown.
gpu::NvmlReport query_nvml();

}  // namespace gb10tune::platform
