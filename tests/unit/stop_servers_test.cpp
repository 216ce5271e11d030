// `gb10tune stop`'s decisions over a /proc tree and a state directory written by the test: which
// processes it lists and stops, what it leaves alone, and what it removes.
#include "gb10tune/launch/stop_servers.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "gb10tune/platform/state_dir.hpp"
#include "support/fake_proc.hpp"
#include "support/test_context.hpp"

namespace gb10tune::launch {
namespace {

using testing::FakeProcess;
using testing::TempDir;
using namespace std::chrono_literals;

constexpr unsigned kStopCaller = 1000;

// A captured machine: llama-servers of the caller (100, 150), of another user (200), a zombie
// (300), a script named llama-server (400) and an editor (500); a state directory beside it.
struct StopRig {
  TempDir root;
  TempDir state;
  StatePaths paths = StatePaths::under(state.path() / "gb10tune");

  StopRig() {
    write_process(100, kStopCaller, "/opt/llama/llama-server");
    write_process(150, kStopCaller, "/opt/other/llama-server");
    write_process(200, 2000, "/opt/llama/llama-server");
    FakeProcess zombie;
    zombie.pid = 300;
    zombie.state = 'Z';
    zombie.uid = kStopCaller;
    testing::write_proc_process(root, zombie);
    write_process(400, kStopCaller, "/usr/bin/bash");
    FakeProcess editor;
    editor.pid = 500;
    editor.comm = "vim";
    editor.uid = kStopCaller;
    editor.exe = "/usr/bin/vim";
    testing::write_proc_process(root, editor);
    std::filesystem::create_directories(paths.pid_file.parent_path());
    std::filesystem::permissions(paths.pid_file.parent_path(), std::filesystem::perms::owner_all);
  }

  void write_process(int pid, unsigned uid, const std::string& exe) const {
    FakeProcess process;
    process.pid = pid;
    process.uid = uid;
    process.exe = exe;
    testing::write_proc_process(root, process);
    root.write(fmt::format("proc/{}/cmdline", pid), exe + std::string(1, '\0'));
  }

  // A pid file and launch record naming `pid`, started at `start_ticks`.
  void launched(int pid, std::uint64_t start_ticks, nlohmann::json plan = nullptr) const {
    LaunchRecord record;
    record.pid = pid;
    record.start_time_ticks = start_ticks;
    record.server_path = "/opt/llama/llama-server";
    record.plan = std::move(plan);
    ASSERT_TRUE(write_launch_record(paths.record, record));
    ASSERT_TRUE(platform::write_file_atomic(paths.pid_file, fmt::format("{}\n", pid)));
  }

  StopRequest request(bool all) const {
    StopRequest request;
    request.all = all;
    request.uid = kStopCaller;
    return request;
  }
};

std::vector<int> pids_of(const std::vector<StopEntry>& entries) {
  std::vector<int> pids;
  for (const StopEntry& entry : entries) {
    pids.push_back(entry.pid);
  }
  return pids;
}

TEST(StopServers, AllListsTheCallersRunningServersAndCountsOtherUsers) {
  StopRig rig;
  const StopOutcome found =
      find_servers_to_stop(platform::Sysroot(rig.root.path()), rig.paths, rig.request(true));
  EXPECT_EQ(found.pid_file.state, PidFileState::none);
  EXPECT_EQ(found.pid_file_path, rig.paths.pid_file.string());
  EXPECT_TRUE(found.all);
  EXPECT_EQ(pids_of(found.listed), (std::vector<int>{100, 150}));
  EXPECT_EQ(found.listed[1].exe, "/opt/other/llama-server");
  EXPECT_FALSE(found.listed[0].launched);
  EXPECT_EQ(found.skipped_other_users, 1u);
  EXPECT_TRUE(found.entries.empty()) << "finding stops nothing";

  const StopOutcome plain =
      find_servers_to_stop(platform::Sysroot(rig.root.path()), rig.paths, rig.request(false));
  EXPECT_TRUE(plain.listed.empty());
  EXPECT_EQ(plain.skipped_other_users, 0u);
}

TEST(StopServers, ThePidFilesServerIsMarkedAndItsRpcWorkersNamed) {
  StopRig rig;
  rig.launched(100, 777,
               {{"rpc",
                 {{"workers",
                   {{{"endpoint", "192.168.100.2:50052"}},
                    {{"endpoint", 7}},
                    "junk",
                    {{"endpoint", "[fd00::2]:50052"}}}}}}});
  const StopOutcome found =
      find_servers_to_stop(platform::Sysroot(rig.root.path()), rig.paths, rig.request(true));
  EXPECT_EQ(found.pid_file.state, PidFileState::running);
  ASSERT_EQ(pids_of(found.listed), (std::vector<int>{100, 150}));
  EXPECT_TRUE(found.listed[0].launched);
  EXPECT_FALSE(found.listed[1].launched);
  EXPECT_EQ(found.rpc_workers,
            (std::vector<std::string>{"192.168.100.2:50052", "[fd00::2]:50052"}));
}

TEST(StopServers, AStalePidFileIsRemovedAndItsPidNeverSignalled) {
  StopRig rig;
  rig.launched(500, 777);  // the editor has pid 500 now
  const platform::Sysroot root(rig.root.path());
  const StopOutcome outcome =
      stop_found(root, rig.paths, find_servers_to_stop(root, rig.paths, rig.request(false)), 1s);
  EXPECT_EQ(outcome.pid_file.state, PidFileState::stale);
  EXPECT_NE(outcome.pid_file.why.find("pid 500 now belongs to /usr/bin/vim"), std::string::npos)
      << outcome.pid_file.why;
  EXPECT_TRUE(outcome.stale_removed);
  EXPECT_TRUE(outcome.entries.empty());
  EXPECT_FALSE(outcome.failed());
  EXPECT_FALSE(std::filesystem::exists(rig.paths.pid_file));
  EXPECT_FALSE(std::filesystem::exists(rig.paths.record));
}

TEST(StopServers, ACapturedMachineIsNeverSignalledAndEachStopSaysSo) {
  StopRig rig;
  rig.launched(100, 777);
  const platform::Sysroot root(rig.root.path());
  const StopOutcome outcome =
      stop_found(root, rig.paths, find_servers_to_stop(root, rig.paths, rig.request(true)), 1s);
  EXPECT_FALSE(outcome.stale_removed);
  ASSERT_EQ(pids_of(outcome.entries), (std::vector<int>{100, 150}));
  EXPECT_TRUE(outcome.entries[0].launched);
  EXPECT_EQ(outcome.entries[0].exe, "/opt/llama/llama-server");
  for (const StopEntry& entry : outcome.entries) {
    EXPECT_FALSE(entry.stopped) << entry.pid;
    EXPECT_NE(entry.message.find("cannot be stopped"), std::string::npos) << entry.message;
  }
  EXPECT_TRUE(outcome.failed());
  EXPECT_TRUE(std::filesystem::exists(rig.paths.pid_file)) << "nothing was stopped";
}

TEST(StopServers, AListedProcessThatExitedMeanwhileCountsAsStopped) {
  StopRig rig;
  const platform::Sysroot root(rig.root.path());
  const StopOutcome found = find_servers_to_stop(root, rig.paths, rig.request(true));
  ASSERT_EQ(pids_of(found.listed), (std::vector<int>{100, 150}));
  std::filesystem::remove_all(rig.root.path() / "proc/150");
  const StopOutcome outcome = stop_found(root, rig.paths, found, 1s);
  ASSERT_EQ(pids_of(outcome.entries), (std::vector<int>{100, 150}));
  EXPECT_FALSE(outcome.entries[0].stopped) << "a captured machine";
  EXPECT_TRUE(outcome.entries[1].stopped);
  EXPECT_EQ(outcome.entries[1].message, "process 150 exited before it was stopped");
}

TEST(StopServers, PidFileStatesHaveStableNames) {
  EXPECT_EQ(pid_file_state_name(PidFileState::none), "none");
  EXPECT_EQ(pid_file_state_name(PidFileState::running), "running");
  EXPECT_EQ(pid_file_state_name(PidFileState::stale), "stale");
}

}  // namespace
}  // namespace gb10tune::launch
