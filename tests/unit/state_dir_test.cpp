#include "gb10tune/platform/state_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "support/test_context.hpp"

namespace gb10tune::platform {
namespace {

TEST(StateDir, XdgWinsThenHome) {
  Environment env;
  env.set("HOME", "/home/u");
  EXPECT_EQ(*state_dir(env), "/home/u/.local/state/gb10tune");
  EXPECT_EQ(*config_dir(env), "/home/u/.config/gb10tune");
  env.set("XDG_STATE_HOME", "/xdg/state");
  EXPECT_EQ(*state_dir(env), "/xdg/state/gb10tune");
  env.set("XDG_STATE_HOME", "relative/ignored");
  EXPECT_EQ(*state_dir(env), "/home/u/.local/state/gb10tune");
}

TEST(StateDir, NoHomeIsAnError) {
  const auto dir = state_dir(Environment{});
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("HOME"), std::string::npos);
}

TEST(StateDir, CreatesPrivateDirAndWritesAtomically) {
  testing::TempDir tmp;
  const auto dir = tmp.path() / "a" / "gb10tune";
  ASSERT_TRUE(ensure_private_dir(dir));
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_TRUE(write_file_atomic(dir / "x.json", "one"));
  ASSERT_TRUE(write_file_atomic(dir / "x.json", "two"));
  EXPECT_EQ(testing::read_text(dir / "x.json"), "two");
  EXPECT_TRUE(ensure_private_dir(dir));  // idempotent
}

TEST(StateDir, RefusesASymlinkedOrWorldWritableDir) {
  testing::TempDir tmp;
  std::filesystem::create_directory(tmp.path() / "real");
  std::filesystem::create_directory_symlink(tmp.path() / "real", tmp.path() / "link");
  const Status linked = ensure_private_dir(tmp.path() / "link");
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("symlink"), std::string::npos);
  std::filesystem::create_directory(tmp.path() / "open");
  ::chmod((tmp.path() / "open").c_str(), 0777);
  EXPECT_FALSE(ensure_private_dir(tmp.path() / "open"));
}

}  // namespace
}  // namespace gb10tune::platform
