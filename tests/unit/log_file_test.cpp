#include "gb10tune/platform/log_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "support/test_context.hpp"

namespace gb10tune::platform {
namespace {

using testing::contains;
using testing::read_text;
using testing::TempDir;

TEST(LogFile, AppendTextReturnsWhereTheTextBegins) {
  const TempDir dir;
  const auto path = dir.write("server.log", "loading\n");
  auto log = open_log_for_append(path);
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_EQ(append_text(*log, "==== header\n"), 8u);
  EXPECT_EQ(append_text(*log, "more\n"), 20u);
  EXPECT_EQ(read_text(path), "loading\n==== header\nmore\n");
}

TEST(LogFile, AppendLineAddsTheLineAndANewlineToTheEnd) {
  const TempDir dir;
  const auto path = dir.write("server.log", "srv  log line\n");
  EXPECT_TRUE(append_line(path, "==== gb10tune stop: pid 42 ended on SIGTERM after 0.1 s"));
  EXPECT_TRUE(append_line(path, "second"));
  EXPECT_EQ(read_text(path),
            "srv  log line\n==== gb10tune stop: pid 42 ended on SIGTERM after 0.1 s\nsecond\n");
}

TEST(LogFile, ANewLogIsPrivate) {
  const TempDir dir;
  const auto path = dir.path() / "new.log";
  EXPECT_TRUE(append_line(path, "first"));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_text(path), "first\n");
}

TEST(LogFile, ASymlinkIsNeverFollowed) {
  const TempDir dir;
  const auto target = dir.write("elsewhere", "untouched\n");
  const auto link = dir.path() / "server.log";
  std::filesystem::create_symlink(target, link);
  const auto opened = open_log_for_append(link);
  ASSERT_FALSE(opened);
  EXPECT_TRUE(contains(opened.error().message, link.string())) << opened.error().message;
  EXPECT_TRUE(contains(opened.error().message, "it is a symlink; remove it"));
  EXPECT_FALSE(append_line(link, "note"));
  EXPECT_EQ(read_text(target), "untouched\n");
}

}  // namespace
}  // namespace gb10tune::platform
