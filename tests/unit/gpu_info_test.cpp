#include "gb10tune/gpu/gpu_info.hpp"

#include <gtest/gtest.h>

#include "support/fake_gpu.hpp"

namespace gb10tune::gpu {
namespace {

TEST(DeviceFacts, ClassifiesGb10ByNameOrByIntegratedCc121) {
  EXPECT_EQ(classify(testing::gb10_device()), GpuKind::gb10);
  GpuDevice unnamed = testing::gb10_device();
  unnamed.name = "NVIDIA Graphics Device";
  EXPECT_EQ(classify(unnamed), GpuKind::gb10);
  unnamed.integrated = false;
  EXPECT_EQ(classify(unnamed), GpuKind::discrete);  // cc 12.1 alone is not enough
  GpuDevice orin;
  orin.name = "Orin";
  orin.integrated = true;
  orin.cc_major = 8;
  orin.cc_minor = 7;
  EXPECT_EQ(classify(orin), GpuKind::integrated);
  EXPECT_EQ(classify(testing::h200_device()), GpuKind::discrete);
  EXPECT_EQ(describe(GpuKind::gb10), "GB10 (integrated, unified memory)");
}

TEST(DeviceFacts, NominalBandwidthFromTableThenClock) {
  EXPECT_DOUBLE_EQ(nominal_bandwidth(testing::gb10_device()), 273e9);
  EXPECT_DOUBLE_EQ(nominal_bandwidth(testing::h200_device()), 4.8e12);
  GpuDevice h100 = testing::h200_device();
  h100.name = "NVIDIA H100 80GB HBM3";
  EXPECT_DOUBLE_EQ(nominal_bandwidth(h100), 3.35e12);
  GpuDevice unknown;
  unknown.name = "Some GPU";
  unknown.memory_clock_khz = 1000000;  // 1 GHz, DDR, 256 bits
  unknown.memory_bus_width_bits = 256;
  EXPECT_DOUBLE_EQ(nominal_bandwidth(unknown), 64e9);
  unknown.memory_clock_khz = 0;
  EXPECT_DOUBLE_EQ(nominal_bandwidth(unknown), 0.0);
}

TEST(DeviceFacts, CudaArchitectureUsesArchSpecificSuffixFromBlackwellOn) {
  EXPECT_EQ(cuda_architecture(testing::gb10_device()), "121a-real");
  EXPECT_EQ(cuda_architecture(testing::h200_device()), "90-real");
  EXPECT_EQ(cuda_architecture(testing::rtx4090_device()), "89-real");
}

TEST(DeviceFacts, ReasonsAndVersions) {
  GpuReport report;
  report.status = GpuStatus::built_without_cuda;
  EXPECT_EQ(no_gpu_reason(report), "no GPU: not available: built without CUDA");
  report.status = GpuStatus::no_driver;
  report.detail = "cudaErrorInsufficientDriver";
  EXPECT_NE(no_gpu_reason(report).find("cudaErrorInsufficientDriver"), std::string::npos);
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12080), "12.8");
  EXPECT_EQ(format_cuda_version(0), "");
  EXPECT_EQ(to_string(GpuStatus::no_device), "no-device");
}

}  // namespace
}  // namespace gb10tune::gpu
