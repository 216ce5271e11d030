#include "gb10tune/sys/cpuinfo.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::sys {
namespace {

Expected<CpuInfo> fixture_cpu(const std::string& scenario) {
  return read_cpuinfo(platform::Sysroot(testing::sysroot_fixture(scenario)));
}

TEST(CpuInfo, Gb10HasTwoClustersOfTen) {
  const auto cpu = fixture_cpu("gb10");
  ASSERT_TRUE(cpu) << cpu.error().message;
  EXPECT_EQ(cpu->family, CpuFamily::arm);
  EXPECT_EQ(cpu->logical_cpus, 20);
  ASSERT_EQ(cpu->clusters.size(), 2u);
  EXPECT_EQ(cpu->clusters[0].name, "Cortex-A725");
  EXPECT_EQ(cpu->clusters[0].part, 0xd87u);
  EXPECT_EQ(cpu->clusters[1].name, "Cortex-X925");
  EXPECT_EQ(cpu->clusters[1].cores, 10);
  EXPECT_EQ(cpu->model, "10x Cortex-A725 + 10x Cortex-X925");
  EXPECT_EQ(cpu->features,
            (std::vector<std::string>{"dotprod", "i8mm", "bf16", "sve", "sve2", "fp16"}));
}

TEST(CpuInfo, NeoverseV1LacksSve2) {
  const auto cpu = fixture_cpu("arm-nosve2");
  ASSERT_TRUE(cpu) << cpu.error().message;
  EXPECT_EQ(cpu->model, "8x Neoverse V1");
  EXPECT_EQ(cpu->features, (std::vector<std::string>{"dotprod", "i8mm", "bf16", "sve", "fp16"}));
}

TEST(CpuInfo, X86ModelAndFeatures) {
  const auto cpu = fixture_cpu("x86-discrete");
  ASSERT_TRUE(cpu) << cpu.error().message;
  EXPECT_EQ(cpu->family, CpuFamily::x86);
  EXPECT_EQ(cpu->model, "AMD Ryzen 9 7950X 16-Core Processor");
  EXPECT_EQ(cpu->logical_cpus, 8);
  const auto& f = cpu->features;
  EXPECT_NE(std::find(f.begin(), f.end(), "avx512f"), f.end());
  EXPECT_NE(std::find(f.begin(), f.end(), "avx512vnni"), f.end());
}

TEST(CpuInfo, CommonFlagsAreTheIntersection) {
  const std::string text =
      "processor : 0\nCPU implementer : 0x41\nCPU part : 0xd85\nFeatures : asimddp sve2 i8mm\n\n"
      "processor : 1\nCPU implementer : 0x41\nCPU part : 0xd87\nFeatures : asimddp i8mm\n";
  const auto cpu = parse_cpuinfo(text, "cpuinfo");
  ASSERT_TRUE(cpu) << cpu.error().message;
  EXPECT_EQ(cpu->features, (std::vector<std::string>{"dotprod", "i8mm"}));
}

TEST(CpuInfo, EmptyFileIsAClearError) {
  const auto cpu = fixture_cpu("malformed");
  ASSERT_FALSE(cpu);
  EXPECT_NE(cpu.error().message.find("lists no processor"), std::string::npos);
  EXPECT_NE(cpu.error().message.find("malformed/proc/cpuinfo"), std::string::npos);
}

TEST(CpuInfo, OddFieldsDoNotCrash) {
  const std::string text =
      "processor : 0\nCPU implementer : zz\nCPU part : \nFeatures :\nno colon here\n"
      "processor\n: value without key\n";
  const auto cpu = parse_cpuinfo(text, "cpuinfo");
  ASSERT_TRUE(cpu) << cpu.error().message;
  EXPECT_EQ(cpu->logical_cpus, 1);
  EXPECT_EQ(cpu->family, CpuFamily::arm);
  EXPECT_TRUE(cpu->features.empty());
  EXPECT_NE(cpu->model.find("implementer 0x0"), std::string::npos);
}

TEST(CpuInfo, ArmCoreTable) {
  EXPECT_EQ(arm_core_name(0x41, 0xd85), "Cortex-X925");
  EXPECT_EQ(arm_core_name(0x41, 0xd87), "Cortex-A725");
  EXPECT_EQ(arm_core_name(0x41, 0xd4f), "Neoverse V2");
  EXPECT_EQ(arm_core_name(0x41, 0xfff), "");
  EXPECT_EQ(arm_core_arch(0x41, 0xd85), "armv9.2-a");
}

}  // namespace
}  // namespace gb10tune::sys
