#include "gb10tune/platform/terminal.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "gb10tune/platform/fd.hpp"
#include "support/test_context.hpp"

namespace gb10tune::platform {
namespace {

TEST(Terminal, APseudoTerminalIsATerminalAFileIsNot) {
  const Fd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  ASSERT_TRUE(master.valid()) << "no pseudo-terminal here";
  ASSERT_EQ(::grantpt(master.get()), 0);
  ASSERT_EQ(::unlockpt(master.get()), 0);
  const Fd terminal(::open(::ptsname(master.get()), O_RDWR | O_NOCTTY | O_CLOEXEC));
  ASSERT_TRUE(terminal.valid());
  EXPECT_TRUE(is_terminal(terminal.get()));

  const testing::TempDir dir;
  const auto file = open_read_only(dir.write("plain", "text"));
  ASSERT_TRUE(file);
  EXPECT_FALSE(is_terminal(file->get()));
  EXPECT_EQ(terminal_columns(file->get()), 0u);
  EXPECT_FALSE(is_terminal(-1));
}

}  // namespace
}  // namespace gb10tune::platform
