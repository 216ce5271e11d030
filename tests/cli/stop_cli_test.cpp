// `gb10tune stop` run as the real binary, with XDG_STATE_HOME pointing at a temporary
// directory and servers started by start_server against the stand-in.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "support/background_run.hpp"
#include "support/fake_proc.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

struct StopFixture {
  TempDir dir;
  ScopedEnv state{"XDG_STATE_HOME", dir.path().string()};
  launch::StatePaths paths = launch::StatePaths::under(dir.path() / "gb10tune");

  // Starts the stand-in through start_server, as launch does.
  int start(const std::map<std::string, std::string>& env = {}) {
    return start_stand_in_through_launch(paths, env);
  }
};

TEST(CliStop, NothingToStop) {
  StopFixture f;
  const CliResult result = run_binary({"stop"});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_TRUE(contains(result.out, "no llama-server started by gb10tune is running")) << result.out;
}

TEST(CliStop, StopsTheLaunchedServer) {
  StopFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  const CliResult result = run_binary({"stop"});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_TRUE(
      contains(result.out, fmt::format("stopped llama-server (pid {}): ended on SIGTERM", pid)))
      << result.out;
  EXPECT_FALSE(process_alive(pid));
  reap_child(pid);
  EXPECT_FALSE(std::filesystem::exists(f.paths.pid_file));
  // A second stop has nothing to do.
  const CliResult again = run_binary({"stop"});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_TRUE(contains(again.out, "no llama-server started by gb10tune is running")) << again.out;
}

TEST(CliStop, KillsAfterTheTimeoutAndReportsJson) {
  StopFixture f;
  const int pid = f.start({{"STANDIN_IGNORE_SIGTERM", "1"}});
  ASSERT_GT(pid, 0);
  const CliResult result = run_binary({"stop", "--grace", "0.5", "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  const auto doc = nlohmann::json::parse(result.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << result.out;
  EXPECT_EQ(doc["command"], "stop");
  EXPECT_EQ(doc["pid_file"]["state"], "running");
  ASSERT_EQ(doc["processes"].size(), 1u);
  EXPECT_EQ(doc["processes"][0]["pid"], pid);
  EXPECT_EQ(doc["processes"][0]["stopped"], true);
  EXPECT_EQ(doc["processes"][0]["killed"], true);
  EXPECT_FALSE(process_alive(pid));
  reap_child(pid);
}

TEST(CliStop, StalePidFileOfAnotherProgramIsRemovedAndThatProgramLeftAlone) {
  StopFixture f;
  auto sleeper = platform::Child::spawn({"/bin/sleep", "60"}, {}, STDERR_FILENO);
  ASSERT_TRUE(sleeper) << sleeper.error().message;
  ASSERT_TRUE(wait_for_exec(sleeper->pid(), "sleep"));
  std::filesystem::create_directories(f.paths.pid_file.parent_path());
  std::filesystem::permissions(f.paths.pid_file.parent_path(), std::filesystem::perms::owner_all);
  launch::LaunchRecord record;
  record.pid = sleeper->pid();
  record.start_time_ticks = 1;  // the server launch once started under this pid
  record.server_path = stand_in_server_path().string();
  ASSERT_TRUE(launch::write_launch_record(f.paths.record, record));
  std::ofstream(f.paths.pid_file) << sleeper->pid() << "\n";

  const CliResult result = run_binary({"stop"});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_TRUE(contains(result.out, "stale")) << result.out;
  EXPECT_TRUE(contains(result.out, "now belongs to")) << result.out;
  EXPECT_TRUE(contains(result.out, "sleep")) << result.out;
  EXPECT_TRUE(contains(result.out, "nothing was signalled")) << result.out;
  EXPECT_FALSE(std::filesystem::exists(f.paths.pid_file));
  EXPECT_FALSE(sleeper->poll());
  EXPECT_TRUE(process_alive(sleeper->pid()));
  sleeper->terminate(1s);
}

TEST(CliStop, AllListsTheUsersServersAndRefusesToSignalACapturedMachine) {
  StopFixture f;
  // A captured machine with one llama-server of this user: listed, never signalled.
  TempDir root;
  root.write("proc/4242/stat", proc_stat_text(4242, "llama-server", 'S', 777));
  root.write("proc/4242/comm", "llama-server\n");
  root.write("proc/4242/cmdline", std::string("/opt/llama/llama-server\0--port\0008080\0", 36));
  root.write("proc/4242/status",
             fmt::format("Name:\tllama-server\nUid:\t{0}\t{0}\t{0}\t{0}\n", ::getuid()));
  std::filesystem::create_symlink("/opt/llama/llama-server", root.path() / "proc/4242/exe");
  const CliResult result = run_binary({"--sysroot", root.path().string(), "stop", "--all"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_TRUE(contains(result.out, "llama-server processes of yours (1)")) << result.out;
  EXPECT_TRUE(contains(result.out, "/opt/llama/llama-server")) << result.out;
  EXPECT_TRUE(contains(result.out, "cannot be stopped")) << result.out;
}

TEST(CliStop, RejectsABadTimeout) {
  StopFixture f;
  const CliResult result = run_binary({"stop", "--grace", "-1"});
  EXPECT_EQ(result.exit_code, 2) << result.out;
}

// Issue 22 item 5: a state directory its group may write is not believed: someone in that group
// could have planted the launch record whose pid stop signals. Nothing is signalled or removed.
// Runs `stop`, which must refuse (exit 1) naming `problem` and `fix`, leave the server running
// and keep the pid file and record; the server is killed and reaped afterwards.
void expect_stop_refused(const StopFixture& f, int pid, const std::string& problem,
                         const std::string& fix) {
  const CliResult result = run_binary({"stop"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_TRUE(contains(result.out, problem)) << result.out;
  EXPECT_TRUE(contains(result.out, fix)) << result.out;
  EXPECT_TRUE(process_alive(pid));
  EXPECT_TRUE(std::filesystem::exists(f.paths.record));
  EXPECT_TRUE(std::filesystem::exists(f.paths.pid_file));
  ::kill(pid, SIGKILL);
  reap_child(pid);
}

TEST(CliStop, GroupWritableStateDirIsRefusedAndNothingIsSignalled) {
  StopFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  const auto state = f.dir.path() / "gb10tune";
  expect_stop_refused(f, pid, make_group_writable(state), "chmod 700 " + state.string());
}

// A launch record others may write is refused too (in a private directory), and left in place
// for the user to fix (`chmod 600`): it is neither believed nor removed as stale.
TEST(CliStop, LaunchRecordWritableByOthersIsRefusedAndKept) {
  StopFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::chmod(f.paths.record.c_str(), 0666), 0);
  expect_stop_refused(f, pid,
                      f.paths.record.string() + " is writable by its group and others (mode 0666)",
                      "chmod 600 " + f.paths.record.string());
}

// State written by an older gb10tune or by hand that others may only read (0755, 0644) is
// tightened, not refused: reading it is no injection, and stop works as before.
TEST(CliStop, StateOthersMayOnlyReadIsTightenedAndUsed) {
  StopFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  const auto state = f.dir.path() / "gb10tune";
  ASSERT_EQ(::chmod(state.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(f.paths.record.c_str(), 0644), 0);
  const CliResult result = run_binary({"stop"});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_FALSE(process_alive(pid));
  reap_child(pid);
  struct stat st {};
  ASSERT_EQ(::stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

}  // namespace
}  // namespace gb10tune::testing
