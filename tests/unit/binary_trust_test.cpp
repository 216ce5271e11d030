#include "gb10tune/trust/binary_trust.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "support/test_context.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune::trust {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// A process running a copy of /bin/sleep whose file is deleted once it runs: its
// /proc/<pid>/exe is a link to a deleted file. Killed and reaped on destruction.
class DeletedBinaryProcess {
 public:
  explicit DeletedBinaryProcess(const fs::path& copy) {
    fs::copy_file("/bin/sleep", copy, fs::copy_options::overwrite_existing);
    fs::permissions(copy, fs::perms(0755));
    const std::string path = copy.string();
    std::string seconds = "60";
    char* argv[] = {const_cast<char*>(path.c_str()), seconds.data(), nullptr};
    if (::posix_spawn(&m_pid, argv[0], nullptr, nullptr, argv, environ) != 0) {
      m_pid = -1;
    }
    // Wait until the kernel runs the copy (exe points at it; 30 s at most), then delete it.
    for (int i = 0; i < 6000 && m_pid > 0; ++i) {
      std::error_code ec;
      if (fs::read_symlink(fmt::format("/proc/{}/exe", m_pid), ec) == copy) {
        break;
      }
      ::usleep(5000);
    }
    fs::remove(copy);
  }
  DeletedBinaryProcess(const DeletedBinaryProcess&) = delete;
  DeletedBinaryProcess& operator=(const DeletedBinaryProcess&) = delete;
  ~DeletedBinaryProcess() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      int status = 0;
      ::waitpid(m_pid, &status, 0);
    }
  }
  std::string exe_link() const { return fmt::format("/proc/{}/exe", m_pid); }
  bool started() const { return m_pid > 0; }

 private:
  pid_t m_pid = -1;
};

TEST(BinaryTrust, AFileInAPrivateDirectoryRunsFromItsRealPath) {
  TempDir dir;  // mode 0700 in the sticky /tmp: no one else can reach or rename it
  const auto bin = dir.write("bin/llama-server", "#!/bin/sh\n", true);
  fs::create_symlink(bin, dir.path() / "link");
  const auto verdict = check_binary((dir.path() / "link").string());
  ASSERT_TRUE(verdict) << verdict.error().message;
  EXPECT_TRUE(verdict->may_run) << verdict->problem;
  EXPECT_EQ(verdict->path, fs::canonical(bin).string());
  const auto runnable = runnable_binary((dir.path() / "link").string());
  ASSERT_TRUE(runnable) << runnable.error().message;
  EXPECT_EQ(*runnable, fs::canonical(bin).string());
}

// The link is private, the file it points to is not: the real location is what counts.
TEST(BinaryTrust, ALinkToAFileInAnOpenDirectoryIsRefused) {
  TempDir dir;
  const auto open = testing::marker_script_in_open_dir(dir, "llama-server", dir.path() / "ran");
  fs::create_symlink(open, dir.path() / "link");
  const auto runnable = runnable_binary((dir.path() / "link").string());
  ASSERT_FALSE(runnable);
  EXPECT_EQ(runnable.error().code, ExitCode::usage);
  EXPECT_NE(runnable.error().message.find(fmt::format(
                "refusing to run {} ({}): binary in {}, a directory writable by its group and "
                "others (mode 0777)",
                (dir.path() / "link").string(), fs::canonical(open).string(),
                fs::canonical(open.parent_path()).string())),
            std::string::npos)
      << runnable.error().message;
}

TEST(BinaryTrust, AnotherUsersFileIsRefused) {
  TempDir dir;
  const auto foreign = testing::copy_owned_by_another_user(dir, "/bin/true");
  if (!foreign) {
    GTEST_SKIP() << "giving a file to another user needs root (CI runs as root); the rule is "
                    "covered by PathRules.AnotherUsersBinaryIsRefusedNamingTheOwnerAndTheFix";
  }
  const auto verdict = check_binary(foreign->string());
  ASSERT_TRUE(verdict) << verdict.error().message;
  EXPECT_FALSE(verdict->may_run);
  EXPECT_NE(verdict->problem.find("(uid 65534), not by root"), std::string::npos)
      << verdict->problem;
}

TEST(BinaryTrust, AMissingFileIsAUsageErrorNamingIt) {
  TempDir dir;
  const auto missing = (dir.path() / "llama-server").string();
  const auto verdict = check_binary(missing);
  ASSERT_FALSE(verdict);
  EXPECT_EQ(verdict.error().code, ExitCode::usage);
  EXPECT_NE(verdict.error().message.find(missing), std::string::npos);
}

// verify runs a server's binary replaced since its start through /proc/<pid>/exe: the deleted
// file is judged by what the link reaches, with the directory it was in.
TEST(BinaryTrust, ADeletedBinaryIsJudgedThroughItsExeLink) {
  TempDir dir;
  {
    const DeletedBinaryProcess process(dir.path() / "llama-server");
    ASSERT_TRUE(process.started());
    const auto verdict = check_binary(process.exe_link());
    ASSERT_TRUE(verdict) << verdict.error().message;
    EXPECT_TRUE(verdict->may_run) << verdict->problem;
    EXPECT_EQ(verdict->path, process.exe_link());
  }
  fs::create_directory(dir.path() / "open");
  fs::permissions(dir.path() / "open", fs::perms::all);
  const DeletedBinaryProcess process(dir.path() / "open" / "llama-server");
  ASSERT_TRUE(process.started());
  const auto verdict = check_binary(process.exe_link());
  ASSERT_TRUE(verdict) << verdict.error().message;
  EXPECT_FALSE(verdict->may_run);
  EXPECT_NE(verdict->problem.find("binary in " + fs::canonical(dir.path() / "open").string()),
            std::string::npos)
      << verdict->problem;
}

}  // namespace
}  // namespace gb10tune::trust
