#include "gb10tune/util/line_printer.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace gb10tune {
namespace {

TEST(LinePrinter, OnATerminalEachStatusRedrawsTheLine) {
  std::ostringstream out;
  {
    LinePrinter printer(out, true, 80);
    printer.status("loading model… 1 s");
    printer.status("loading model… 2 s");
  }  // finished: the line ends
  EXPECT_EQ(out.str(), "\rloading model… 1 s\x1b[K\rloading model… 2 s\x1b[K\n");
}

TEST(LinePrinter, ElsewhereEachStatusIsALineOfItsOwn) {
  std::ostringstream out;
  {
    LinePrinter printer(out, false, 10);
    printer.status("loading model, a line longer than the width");
    printer.status("model loaded");
  }
  EXPECT_EQ(out.str(), "loading model, a line longer than the width\nmodel loaded\n");
}

TEST(LinePrinter, FinishEndsAShownStatusOnce) {
  std::ostringstream out;
  LinePrinter printer(out, true, 0);
  printer.finish();  // nothing shown: nothing to end
  printer.status("loading");
  printer.finish();
  printer.finish();
  out << "next";
  EXPECT_EQ(out.str(), "\rloading\x1b[K\nnext");
}

TEST(LinePrinter, OnATerminalTheStatusIsElidedToTheWidth) {
  std::ostringstream out;
  LinePrinter printer(out, true, 12);
  printer.status("gb10tune launch: loading 12 s");
  EXPECT_EQ(out.str(), "\rgb10tu… 12 s\x1b[K");  // 6 + 1 + 5 columns
}

TEST(ElideMiddle, KeepsHeadAndTailAndCountsCharactersNotBytes) {
  EXPECT_EQ(elide_middle("short", 10), "short");
  EXPECT_EQ(elide_middle("short", 0), "short");  // width unknown
  EXPECT_EQ(elide_middle("abcdefghij", 5), "ab…ij");
  EXPECT_EQ(elide_middle("abcdefghij", 1), "…");
  // "…" and "·" are one column each: never cut inside a character.
  EXPECT_EQ(elide_middle("ab·cd·ef·gh", 7), "ab·…·gh");
  EXPECT_EQ(elide_middle("x…y", 3), "x…y");
}

}  // namespace
}  // namespace gb10tune
