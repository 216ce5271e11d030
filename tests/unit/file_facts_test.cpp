#include "gb10tune/platform/file_facts.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "support/test_context.hpp"

namespace gb10tune::platform {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(FileFacts, AnExecutableFileIsARegularFileThatMayBeExecuted) {
  const TempDir dir;
  const auto program = dir.write("bin/llama-server", "#!/bin/sh\n", true);
  const auto data = dir.write("bin/notes.txt", "text");
  const auto link = dir.path() / "bin/link";
  fs::create_symlink(program, link);
  EXPECT_TRUE(is_executable_file(program));
  EXPECT_TRUE(is_executable_file(link));  // symlinks are followed
  EXPECT_FALSE(is_executable_file(data));
  EXPECT_FALSE(is_executable_file(dir.path() / "bin"));  // a directory is not a program
  EXPECT_FALSE(is_executable_file(dir.path() / "bin/missing"));
}

TEST(FileFacts, FileStampHoldsSizeAndModificationTime) {
  const TempDir dir;
  const auto path = dir.write("llama-server", "0123456789");
  const auto when = fs::file_time_type::clock::now();
  fs::last_write_time(path, when);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const auto stamp = file_stamp(path);
  ASSERT_TRUE(stamp);
  EXPECT_EQ(stamp->size, 10u);
  EXPECT_EQ(stamp->modified_s, st.st_mtim.tv_sec);
  EXPECT_FALSE(file_stamp(dir.path() / "missing"));
}

TEST(FileFacts, TempDirIsNewPrivateAndUnderTheTempDirectory) {
  const TempDir parent;
  const testing::ScopedEnv tmpdir("TMPDIR", parent.path().string());
  const auto first = make_temp_dir("gb10tune-test-");
  const auto second = make_temp_dir("gb10tune-test-");
  ASSERT_TRUE(first && second) << (first ? second.error().message : first.error().message);
  EXPECT_NE(*first, *second);
  EXPECT_EQ(first->parent_path(), parent.path());
  EXPECT_EQ(first->filename().string().rfind("gb10tune-test-", 0), 0u);
  struct stat st {};
  ASSERT_EQ(::stat(first->c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(FileFacts, TempDirFailsSayingWhy) {
  const testing::ScopedEnv missing("TMPDIR", "/nonexistent-gb10tune-tmp");
  const auto made = make_temp_dir("gb10tune-test-");
  ASSERT_FALSE(made);
  EXPECT_TRUE(testing::contains(made.error().message, "no temporary directory"))
      << made.error().message;
}

}  // namespace
}  // namespace gb10tune::platform
