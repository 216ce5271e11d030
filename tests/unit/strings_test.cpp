#include "gb10tune/util/strings.hpp"

#include <gtest/gtest.h>

namespace gb10tune {
namespace {

TEST(Strings, TrimRemovesBlanksOnBothEnds) {
  EXPECT_EQ(trim("  \tabc \r\n"), "abc");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" \t "), "");
}

TEST(Strings, SplitKeepsEmptyFields) {
  const auto fields = split("a::b:", ':');
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[0], "a");
  EXPECT_EQ(fields[1], "");
  EXPECT_EQ(fields[2], "b");
  EXPECT_EQ(fields[3], "");
}

TEST(Strings, SplitWordsDropsRuns) {
  const auto words = split_words("  fp  asimd\tsve2 ");
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[2], "sve2");
}

TEST(Strings, ParseU64AcceptsDecimalAndHexOnly) {
  EXPECT_EQ(parse_u64("1234"), 1234u);
  EXPECT_EQ(parse_u64("0xd85"), 0xd85u);
  EXPECT_EQ(parse_u64("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(parse_u64("18446744073709551616"));  // overflow
  EXPECT_FALSE(parse_u64("12kB"));
  EXPECT_FALSE(parse_u64("-1"));
  EXPECT_FALSE(parse_u64(""));
  EXPECT_FALSE(parse_u64("0x"));
}

TEST(Strings, FormatsBytesInBothUnitSystems) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(36ull << 30), "36.0 GiB");
  EXPECT_EQ(format_bytes_si(273'000'000'000ull), "273.0 GB");
}

TEST(Strings, WrapTextBreaksAtWidthWithIndent) {
  EXPECT_EQ(wrap_text("aaa bbb ccc", 9, "  "), "  aaa bbb\n  ccc");
  EXPECT_EQ(wrap_text("", 10, "  "), "");
  EXPECT_EQ(wrap_text("averyveryverylongword x", 8, ""), "averyveryverylongword\nx");
}

}  // namespace
}  // namespace gb10tune
