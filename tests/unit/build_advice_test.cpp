#include "gb10tune/probe/build_advice.hpp"

#include <gtest/gtest.h>

#include "support/fake_gpu.hpp"
#include "support/test_context.hpp"

namespace gb10tune::probe {
namespace {

sys::CpuInfo cpu_of(const std::string& scenario) {
  auto cpu = sys::read_cpuinfo(platform::Sysroot(testing::sysroot_fixture(scenario)));
  EXPECT_TRUE(cpu) << cpu.error().message;
  return *cpu;
}

gpu::GpuReport with(gpu::GpuDevice device) {
  gpu::GpuReport report;
  report.status = gpu::GpuStatus::available;
  report.devices.push_back(std::move(device));
  return report;
}

TEST(BuildAdvice, Gb10GetsTheK11Line) {
  const BuildAdvice advice = make_build_advice(cpu_of("gb10"), with(testing::gb10_device()));
  EXPECT_EQ(advice.arm_arch, "armv9.2-a+dotprod+i8mm+bf16+sve2");
  EXPECT_EQ(advice.cuda_architectures, std::vector<std::string>{"121a-real"});
  EXPECT_EQ(advice.configure_command,
            "cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=121a-real "
            "-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv9.2-a+dotprod+i8mm+bf16+sve2 "
            "-DGGML_CUDA_GRAPHS=ON -DCMAKE_BUILD_TYPE=Release");
  EXPECT_EQ(advice.build_command,
            "cmake --build build --config Release -j 20 --target llama-server");
}

TEST(BuildAdvice, ArmWithoutSve2FallsBackToSve) {
  gpu::GpuReport none;
  none.status = gpu::GpuStatus::no_driver;
  const BuildAdvice advice = make_build_advice(cpu_of("arm-nosve2"), none);
  EXPECT_EQ(advice.arm_arch, "armv8.4-a+dotprod+i8mm+bf16+sve");
  EXPECT_TRUE(advice.cuda_architectures.empty());
  EXPECT_EQ(advice.configure_command.find("GGML_CUDA"), std::string::npos);
  EXPECT_NE(advice.configure_command.find("-DGGML_NATIVE=OFF"), std::string::npos);
}

TEST(BuildAdvice, X86KeepsNativeAndUsesItsGpu) {
  const BuildAdvice advice =
      make_build_advice(cpu_of("x86-discrete"), with(testing::rtx4090_device()));
  EXPECT_TRUE(advice.arm_arch.empty());
  EXPECT_EQ(advice.configure_command,
            "cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=89-real -DGGML_NATIVE=ON "
            "-DGGML_CUDA_GRAPHS=ON -DCMAKE_BUILD_TYPE=Release");
}

TEST(BuildAdvice, SeveralGpusListEachArchitectureOnceAndQuoteTheList) {
  gpu::GpuReport report = with(testing::rtx4090_device());
  report.devices.push_back(testing::h200_device());
  report.devices.push_back(testing::h200_device());
  const BuildAdvice advice = make_build_advice(cpu_of("x86-discrete"), report);
  EXPECT_EQ(advice.cuda_architectures, (std::vector<std::string>{"89-real", "90-real"}));
  EXPECT_NE(advice.configure_command.find("'-DCMAKE_CUDA_ARCHITECTURES=89-real;90-real'"),
            std::string::npos);
}

TEST(BuildAdvice, HeterogeneousArmTakesTheLowestLevel) {
  const auto cpu = sys::parse_cpuinfo(
      "processor : 0\nCPU implementer : 0x41\nCPU part : 0xd85\nFeatures : asimddp i8mm bf16 "
      "sve sve2\n\nprocessor : 1\nCPU implementer : 0x41\nCPU part : 0xd0b\nFeatures : "
      "asimddp\n",
      "cpuinfo");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(arm_march(*cpu), "armv8.2-a+dotprod");
}

TEST(BuildAdvice, UnknownArmCoreDerivesLevelFromFeatures) {
  const auto cpu = sys::parse_cpuinfo(
      "processor : 0\nCPU implementer : 0x61\nCPU part : 0x039\nFeatures : asimddp i8mm bf16\n",
      "cpuinfo");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(arm_march(*cpu), "armv8.6-a+dotprod+i8mm+bf16");
}

}  // namespace
}  // namespace gb10tune::probe
