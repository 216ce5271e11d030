// GB10TUNE_REQUIRE_GPU (support/gpu_gate.hpp): what the GPU tests do without a usable GPU. The
// suite is not named Gpu*: it needs no GPU and belongs to the `unit` label.
#include "support/gpu_gate.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace gb10tune::testing {
namespace {

using Action = GpuGate::Action;

const kernels::DeviceProbe kOneGpu{1, ""};
const kernels::DeviceProbe kBrokenDriver{
    0,
    "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version "
    "(cudaErrorInsufficientDriver)"};
const kernels::DeviceProbe kNoDevice{0,
                                     "cudaGetDeviceCount: no CUDA-capable device is detected "
                                     "(cudaErrorNoDevice)"};

TEST(RequireGpuGate, RunsWhereThereIsAGpuWhateverTheVariable) {
  for (const char* require : {static_cast<const char*>(nullptr), "", "0", "1"}) {
    EXPECT_EQ(gpu_gate(true, kOneGpu, require).action, Action::run);
  }
}

TEST(RequireGpuGate, SkipsWithoutAGpuByDefaultAndSaysWhy) {
  for (const char* require : {static_cast<const char*>(nullptr), "", "0"}) {
    const GpuGate gate = gpu_gate(true, kBrokenDriver, require);
    EXPECT_EQ(gate.action, Action::skip);
    EXPECT_NE(gate.message.find("cudaErrorInsufficientDriver"), std::string::npos) << gate.message;
    EXPECT_NE(gate.message.find("GB10TUNE_REQUIRE_GPU=1"), std::string::npos) << gate.message;
  }
  EXPECT_EQ(gpu_gate(false, {0, "built without CUDA"}, nullptr).action, Action::skip);
}

TEST(RequireGpuGate, RequiredGpuMakesABrokenDriverNoDeviceOrNoCudaAFailure) {
  const GpuGate driver = gpu_gate(true, kBrokenDriver, "1");
  EXPECT_EQ(driver.action, Action::fail);
  EXPECT_EQ(driver.message,
            "GB10TUNE_REQUIRE_GPU=1 but no usable CUDA device: cudaGetDeviceCount: CUDA driver "
            "version is insufficient for CUDA runtime version (cudaErrorInsufficientDriver)");
  EXPECT_EQ(gpu_gate(true, kNoDevice, "1").action, Action::fail);
  EXPECT_EQ(gpu_gate(true, {0, ""}, "1").message,
            "GB10TUNE_REQUIRE_GPU=1 but no usable CUDA device: the CUDA runtime found none");
  const GpuGate no_cuda = gpu_gate(false, {0, "built without CUDA"}, "1");
  EXPECT_EQ(no_cuda.action, Action::fail);
  EXPECT_NE(no_cuda.message.find("built without CUDA"), std::string::npos);
}

TEST(RequireGpuGate, AnUnclearValueIsAFailureNotASkip) {
  for (const char* require : {"yes", "true", "2", " 1"}) {
    const GpuGate gate = gpu_gate(true, kOneGpu, require);
    EXPECT_EQ(gate.action, Action::fail) << require;
    EXPECT_NE(gate.message.find("set it to 1"), std::string::npos) << gate.message;
  }
}

TEST(RequireGpuGate, ReadsTheEnvironment) {
  const char* saved = std::getenv("GB10TUNE_REQUIRE_GPU");
  const std::string restore = saved != nullptr ? saved : "";
  ::setenv("GB10TUNE_REQUIRE_GPU", "1", 1);
  const GpuGate required = gpu_gate_here();
  ::setenv("GB10TUNE_REQUIRE_GPU", "0", 1);
  const GpuGate relaxed = gpu_gate_here();
  if (saved != nullptr) {
    ::setenv("GB10TUNE_REQUIRE_GPU", restore.c_str(), 1);
  } else {
    ::unsetenv("GB10TUNE_REQUIRE_GPU");
  }
  const bool usable = kernels::built_with_cuda() && kernels::probe_devices().count > 0;
  EXPECT_EQ(required.action, usable ? Action::run : Action::fail) << required.message;
  EXPECT_EQ(relaxed.action, usable ? Action::run : Action::skip) << relaxed.message;
}

}  // namespace
}  // namespace gb10tune::testing
