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

// The figure of a llama.cpp buffer line after its "= ", as the real build prints it.
TEST(Strings, ParsesLlamaCppMiBFigures) {
  EXPECT_EQ(parse_mib_figure("  1858.63 MiB"), std::optional<std::uint64_t>(1948914811ull));
  EXPECT_EQ(parse_mib_figure("512.00 MiB (512 cells)"), std::optional<std::uint64_t>(512ull << 20));
  EXPECT_EQ(parse_mib_figure("0.39 MiB"), std::optional<std::uint64_t>(408945ull));
  EXPECT_FALSE(parse_mib_figure("1858.63 GiB"));
  EXPECT_FALSE(parse_mib_figure(" MiB"));
  EXPECT_FALSE(parse_mib_figure(""));
  EXPECT_FALSE(parse_mib_figure("..."));
}

TEST(Strings, IndexRangesJoinRuns) {
  EXPECT_EQ(index_ranges({}), "none");
  EXPECT_EQ(index_ranges({7}), "7");
  EXPECT_EQ(index_ranges({0, 1, 2, 3, 5}), "0-3, 5");
  EXPECT_EQ(index_ranges({0, 2, 4, 5}), "0, 2, 4-5");
}

}  // namespace
}  // namespace gb10tune
