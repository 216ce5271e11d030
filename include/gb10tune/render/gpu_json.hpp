// One CUDA device as a JSON object, shared by the probe and bench documents.
#pragma once

#include <nlohmann/json.hpp>

#include "gb10tune/gpu/gpu_info.hpp"

namespace gb10tune::render {

// Every fact of `device` plus what gb10tune derives from it (kind, class, nominal bandwidth,
// CUDA architecture), as named fields with numbers as numbers.
nlohmann::json gpu_device_to_json(const gpu::GpuDevice& device);

}  // namespace gb10tune::render
