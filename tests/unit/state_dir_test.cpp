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
  ASSERT_TRUE(make_private_dir(dir));
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_TRUE(write_file_atomic(dir / "x.json", "one"));
  ASSERT_TRUE(write_file_atomic(dir / "x.json", "two"));
  EXPECT_EQ(testing::read_text(dir / "x.json"), "two");
  EXPECT_TRUE(make_private_dir(dir));  // idempotent
}

// Whether an existing directory may be believed is trust::check_private_dir's to say
// (PrivateFiles.*): make_private_dir leaves it as it is.
TEST(StateDir, AnExistingDirectoryIsLeftAsItIs) {
  testing::TempDir tmp;
  std::filesystem::create_directory(tmp.path() / "open");
  ::chmod((tmp.path() / "open").c_str(), 0777);
  EXPECT_TRUE(make_private_dir(tmp.path() / "open"));
  struct stat st {};
  ASSERT_EQ(::stat((tmp.path() / "open").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0777u);
}

// Issue 22 item 5: the state directory and its files are exactly 0700 and 0600 whatever the
// umask (0277 used to leave a 0500 directory and 0400 files).
TEST(StateDir, ModesDoNotDependOnTheUmask) {
  testing::TempDir tmp;
  const auto dir = tmp.path() / "gb10tune";
  const mode_t old = ::umask(0277);
  const bool made = static_cast<bool>(make_private_dir(dir));
  const bool written = made && static_cast<bool>(write_file_atomic(dir / "x.json", "one"));
  ::umask(old);
  ASSERT_TRUE(made);
  ASSERT_TRUE(written);
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat((dir / "x.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// What a new user met: `report --out reports` (a name with no folder above it) failed with
// "cannot create : Invalid argument", and `--out outdir/` made outdir 0755.
TEST(StateDir, ARelativeNameAndATrailingSlashMakeA0700Directory) {
  testing::TempDir tmp;
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(tmp.path());
  const Status plain = make_private_dir("reports");
  const Status slash = make_private_dir("outdir/");
  const Status here = make_private_dir(".");
  std::filesystem::current_path(before);
  ASSERT_TRUE(plain) << plain.error().message;
  ASSERT_TRUE(slash) << slash.error().message;
  ASSERT_TRUE(here) << here.error().message;
  struct stat st {};
  ASSERT_EQ(::stat((tmp.path() / "reports").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat((tmp.path() / "outdir").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

}  // namespace
}  // namespace gb10tune::platform
