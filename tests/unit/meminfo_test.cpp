#include "gb10tune/sys/meminfo.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::sys {
namespace {

TEST(MemInfo, ParsesTheGb10Fixture) {
  const auto info = read_meminfo(platform::Sysroot(testing::sysroot_fixture("gb10")));
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->total_bytes, 118164064ull * 1024);
  EXPECT_EQ(info->available_bytes, 109876544ull * 1024);
  EXPECT_EQ(info->free_bytes, 60123456ull * 1024);
  EXPECT_EQ(info->page_cache_bytes(), (45678912ull + 123456ull) * 1024);
  EXPECT_EQ(info->swap_total_bytes, 16777212ull * 1024);
}

TEST(MemInfo, MissingRequiredLineNamesFileAndKey) {
  const auto info = parse_meminfo("MemTotal: 100 kB\nMemFree: 50 kB\n", "/x/proc/meminfo");
  ASSERT_FALSE(info);
  EXPECT_NE(info.error().message.find("/x/proc/meminfo"), std::string::npos);
  EXPECT_NE(info.error().message.find("MemAvailable"), std::string::npos);
}

TEST(MemInfo, EmptyFileIsAnError) {
  const auto info = parse_meminfo("", "meminfo");
  ASSERT_FALSE(info);
  EXPECT_NE(info.error().message.find("empty, truncated"), std::string::npos);
}

TEST(MemInfo, TruncatedValueIsAnErrorWithLineNumber) {
  // The fixture ends mid-number without a unit and without MemAvailable.
  const auto info = read_meminfo(platform::Sysroot(testing::sysroot_fixture("malformed")));
  ASSERT_FALSE(info);
  const auto bad = parse_meminfo("MemTotal: 100 kB\nMemFree: 5x kB\nMemAvailable: 9 kB\n", "m");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("line 2"), std::string::npos) << bad.error().message;
}

TEST(MemInfo, OddLinesAreSkippedAndOverflowRejected) {
  const auto info = parse_meminfo(
      "garbage\n:\nMemTotal: 100 kB\nMemFree: 10 kB\nMemAvailable: 20 kB\nWeird: a b c\n", "m");
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->available_bytes, 20u * 1024);
  const auto huge =
      parse_meminfo("MemTotal: 18446744073709551615 kB\nMemFree: 1 kB\nMemAvailable: 1 kB\n", "m");
  EXPECT_FALSE(huge);
}

TEST(MemInfo, InconsistentFiguresAreRejected) {
  const auto info = parse_meminfo("MemTotal: 10 kB\nMemFree: 5 kB\nMemAvailable: 20 kB\n", "m");
  ASSERT_FALSE(info);
  EXPECT_NE(info.error().message.find("larger than MemTotal"), std::string::npos);
}

TEST(MemInfo, MissingFileNamesThePath) {
  const auto info = read_meminfo(platform::Sysroot("/nonexistent-gb10tune-root"));
  ASSERT_FALSE(info);
  EXPECT_NE(info.error().message.find("/nonexistent-gb10tune-root/proc/meminfo"),
            std::string::npos);
}

}  // namespace
}  // namespace gb10tune::sys
