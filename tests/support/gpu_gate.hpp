// Whether a GPU test runs, skips or fails here. Without a usable GPU the tests skip, unless
// GB10TUNE_REQUIRE_GPU=1: then a missing GPU, a driver error or a build without CUDA is a
// failure, so that a machine that should have a GPU cannot pass the `gpu` label by skipping.
// Header-only: the GPU tests are also built without CMake (tools/bwtune/build.sh).
#pragma once

#include <cstdlib>
#include <string>

#include "gb10tune/kernels/bandwidth.hpp"

namespace gb10tune::testing {

// What a GPU test does, and why (empty message when it runs).
struct GpuGate {
  enum class Action { run, skip, fail };
  Action action = Action::run;
  std::string message;
};

// Decides from the build, the CUDA runtime's answer and the value of GB10TUNE_REQUIRE_GPU
// (nullptr when unset; "" and "0" mean not required, "1" required, anything else is a mistake).
inline GpuGate gpu_gate(bool built_with_cuda, const kernels::DeviceProbe& probe,
                        const char* require) {
  const std::string value = require != nullptr ? require : "";
  if (value != "" && value != "0" && value != "1") {
    return {GpuGate::Action::fail,
            "GB10TUNE_REQUIRE_GPU is '" + value + "'; set it to 1 (a GPU is required) or 0"};
  }
  const bool required = value == "1";
  std::string missing;
  if (!built_with_cuda) {
    missing = "this test binary was built without CUDA (configure with -DGB10TUNE_CUDA=ON)";
  } else if (probe.count <= 0) {
    missing = "no usable CUDA device: " +
              (probe.error.empty() ? std::string("the CUDA runtime found none") : probe.error);
  }
  if (missing.empty()) {
    return {GpuGate::Action::run, ""};
  }
  if (required) {
    return {GpuGate::Action::fail, "GB10TUNE_REQUIRE_GPU=1 but " + missing};
  }
  return {GpuGate::Action::skip, missing + " (set GB10TUNE_REQUIRE_GPU=1 to make this a failure)"};
}

// gpu_gate for this process and its environment.
inline GpuGate gpu_gate_here() {
  return gpu_gate(kernels::built_with_cuda(), kernels::probe_devices(),
                  std::getenv("GB10TUNE_REQUIRE_GPU"));
}

}  // namespace gb10tune::testing
