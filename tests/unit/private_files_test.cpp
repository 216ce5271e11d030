#include "gb10tune/trust/private_files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "gb10tune/platform/state_dir.hpp"
#include "support/test_context.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune::trust {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

unsigned permissions_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// A state directory at dir/state/gb10tune (0700) with the environment that names it.
struct StateFixture {
  TempDir dir;
  fs::path state = dir.path() / "state" / "gb10tune";
  platform::Environment env;
  StateFixture() {
    env.set("XDG_STATE_HOME", (dir.path() / "state").string());
    EXPECT_TRUE(ensure_private_dir(state));
  }
};

TEST(PrivateFiles, CreatesTheDirectory0700AndAcceptsIt) {
  StateFixture f;
  EXPECT_EQ(permissions_of(f.state), 0700u);
  const auto dir = private_state_dir(f.env);
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(*dir, f.state);
  EXPECT_TRUE(ensure_private_dir(f.state));  // idempotent
}

TEST(PrivateFiles, AnAbsentStateDirectoryIsFine) {
  TempDir dir;
  platform::Environment env;
  env.set("XDG_STATE_HOME", (dir.path() / "none").string());
  const auto state = private_state_dir(env);
  ASSERT_TRUE(state) << state.error().message;
  EXPECT_FALSE(fs::exists(*state));
}

TEST(PrivateFiles, NoHomeIsAUsageError) {
  const auto state = private_state_dir(platform::Environment{});
  ASSERT_FALSE(state);
  EXPECT_EQ(state.error().code, ExitCode::usage);
}

TEST(PrivateFiles, ADirectoryOthersMayOnlyReadIsTightened) {
  StateFixture f;
  ASSERT_EQ(::chmod(f.state.c_str(), 0755), 0);
  ASSERT_TRUE(private_state_dir(f.env));
  EXPECT_EQ(permissions_of(f.state), 0700u);
}

TEST(PrivateFiles, ADirectoryOthersMayWriteIsRefused) {
  StateFixture f;
  ASSERT_EQ(::chmod(f.state.c_str(), 0730), 0);
  const auto dir = private_state_dir(f.env);
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().code, ExitCode::failed);
  EXPECT_NE(dir.error().message.find("the state directory " + f.state.string() +
                                     " is writable by its group (mode 0730)"),
            std::string::npos)
      << dir.error().message;
  EXPECT_EQ(permissions_of(f.state), 0730u);  // left for the user to judge
  EXPECT_FALSE(ensure_private_dir(f.state));
  ASSERT_EQ(::chmod(f.state.c_str(), 0777), 0);
  EXPECT_FALSE(ensure_private_dir(f.state));
}

TEST(PrivateFiles, ASymlinkedDirectoryIsRefused) {
  TempDir dir;
  fs::create_directory(dir.path() / "real");
  fs::create_directory_symlink(dir.path() / "real", dir.path() / "link");
  const Status linked = ensure_private_dir(dir.path() / "link");
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("is a symlink"), std::string::npos);
}

// Every file in the state directory is checked before a command believes any of them.
TEST(PrivateFiles, AFileOthersMayWriteMakesTheDirectoryRefused) {
  StateFixture f;
  const auto record = f.state / "launch.json";
  ASSERT_TRUE(platform::write_file_atomic(record, "{}"));
  ASSERT_EQ(::chmod(record.c_str(), 0622), 0);
  const auto dir = private_state_dir(f.env);
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find(record.string() + " is writable by its group and others"),
            std::string::npos)
      << dir.error().message;
  ASSERT_EQ(::chmod(record.c_str(), 0644), 0);
  ASSERT_TRUE(private_state_dir(f.env));
  EXPECT_EQ(permissions_of(record), 0600u);
}

TEST(PrivateFiles, ReadsAPrivateFileAndTightensAReadableOne) {
  StateFixture f;
  const auto pid = f.state / "llama-server.pid";
  const auto absent = read_private_file(pid);
  ASSERT_TRUE(absent);
  EXPECT_FALSE(*absent);
  ASSERT_TRUE(platform::write_file_atomic(pid, "4242\n"));
  EXPECT_EQ(read_private_file(pid)->value_or(""), "4242\n");
  ASSERT_EQ(::chmod(pid.c_str(), 0644), 0);
  EXPECT_EQ(read_private_file(pid)->value_or(""), "4242\n");
  EXPECT_EQ(permissions_of(pid), 0600u);
}

TEST(PrivateFiles, AFileOthersMayWriteOrALinkIsNotRead) {
  StateFixture f;
  const auto pid = f.state / "llama-server.pid";
  ASSERT_TRUE(platform::write_file_atomic(pid, "4242\n"));
  ASSERT_EQ(::chmod(pid.c_str(), 0606), 0);
  auto outcome = read_private_file(pid);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code, ExitCode::failed);
  EXPECT_NE(outcome.error().message.find("chmod 600 " + pid.string()), std::string::npos)
      << outcome.error().message;

  const auto link = f.state / "launch.json";
  fs::create_symlink(pid, link);
  outcome = read_private_file(link);
  ASSERT_FALSE(outcome);
  EXPECT_NE(outcome.error().message.find("symlink"), std::string::npos) << outcome.error().message;
}

TEST(PrivateFiles, AnotherUsersFileIsNotRead) {
  StateFixture f;
  const auto record = f.state / "launch.json";
  ASSERT_TRUE(platform::write_file_atomic(record, "{}"));
  if (::geteuid() != 0) {
    GTEST_SKIP() << "giving a file to another user needs root (CI runs as root); the rule is "
                    "covered by PathRules.StateOfAnotherUserIsRefusedEvenForRoot";
  }
  ASSERT_EQ(::chown(record.c_str(), testing::kForeignUid, testing::kForeignUid), 0);
  const auto outcome = read_private_file(record);
  ASSERT_FALSE(outcome);
  EXPECT_NE(outcome.error().message.find("(uid 65534), not by you"), std::string::npos)
      << outcome.error().message;
  EXPECT_FALSE(private_state_dir(f.env));
}

}  // namespace
}  // namespace gb10tune::trust
