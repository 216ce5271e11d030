#include "gb10tune/sys/os_info.hpp"

#include <gtest/gtest.h>

#include "gb10tune/sys/cgroup.hpp"
#include "support/test_context.hpp"

namespace gb10tune::sys {
namespace {

platform::Sysroot root(const std::string& scenario) {
  return platform::Sysroot(testing::sysroot_fixture(scenario));
}

TEST(OsInfo, ReadsDistributionKernelAndArch) {
  const OsInfo os = read_os_info(root("gb10"), "x86_64");
  EXPECT_EQ(os.pretty_name, "Ubuntu 24.04.3 LTS");
  EXPECT_EQ(os.id, "ubuntu");
  EXPECT_EQ(os.version_id, "24.04");
  EXPECT_EQ(os.kernel, "6.11.0-1016-nvidia");
  EXPECT_EQ(os.arch, "aarch64");  // from the capture, not the fallback
}

TEST(OsInfo, FallsBackWhenTheCaptureDoesNotSay) {
  const OsInfo os = read_os_info(root("no-gpu"), "riscv64");
  EXPECT_EQ(os.arch, "riscv64");
  EXPECT_EQ(os.pretty_name, "Debian GNU/Linux 12 (bookworm)");
}

TEST(OsInfo, JunkOsReleaseDoesNotCrash) {
  const OsInfo os = read_os_info(root("malformed"), "");
  EXPECT_EQ(os.pretty_name, "\"Half");  // an unterminated quote is kept as it is
  EXPECT_TRUE(os.kernel.empty());
}

TEST(OsInfo, OsReleaseUnquotes) {
  EXPECT_EQ(os_release_value("A=1\nNAME='x y'\nB=\"q\\\"z\"\n", "NAME"), "x y");
  EXPECT_EQ(os_release_value("B=\"q\\\"z\"\n", "B"), "q\"z");
  EXPECT_EQ(os_release_value("B=1\n", "C"), "");
}

TEST(Cgroup, V2UnlimitedHasNoLimit) {
  const CgroupMemory memory = read_cgroup_memory(root("gb10"));
  EXPECT_EQ(memory.path, "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_FALSE(memory.limit_bytes);
}

TEST(Cgroup, V2LimitAndUsage) {
  const CgroupMemory memory = read_cgroup_memory(root("arm-nosve2"));
  ASSERT_TRUE(memory.limit_bytes);
  EXPECT_EQ(*memory.limit_bytes, 17179869184ull);
  ASSERT_TRUE(memory.usage_bytes);
  EXPECT_EQ(*memory.usage_bytes, 1073741824ull);
}

TEST(Cgroup, V1NoLimitSentinelIsNoLimit) {
  const CgroupMemory memory = read_cgroup_memory(root("no-gpu"));
  EXPECT_EQ(memory.path, "/");
  EXPECT_FALSE(memory.limit_bytes);
}

TEST(Cgroup, MalformedMembershipDoesNotCrash) {
  const CgroupMemory memory = read_cgroup_memory(root("malformed"));
  EXPECT_FALSE(memory.limit_bytes);
}

}  // namespace
}  // namespace gb10tune::sys
