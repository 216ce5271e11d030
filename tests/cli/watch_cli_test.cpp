// `gb10tune watch` run as the real binary against the stand-in llama-server started the way
// launch starts it, with MemAvailable replayed from a folder of meminfo files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "support/background_run.hpp"
#include "support/stand_in.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct WatchFixture {
  TempDir dir;
  ScopedEnv state{"XDG_STATE_HOME", dir.path().string()};
  launch::StatePaths paths = launch::StatePaths::under(dir.path() / "gb10tune");
  std::vector<int> started;

  // Starts the stand-in through start_server, as launch does.
  int start(const std::map<std::string, std::string>& env = {}) {
    const int pid = start_stand_in_through_launch(paths, env);
    if (pid != 0) {
      started.push_back(pid);
    }
    return pid;
  }

  // A folder of meminfo files, one per sample, with these MemAvailable figures in GiB.
  std::string replay(const std::vector<double>& gib) const {
    for (std::size_t i = 0; i < gib.size(); ++i) {
      const auto kb = static_cast<std::uint64_t>(gib[i] * 1024 * 1024);
      dir.write(fmt::format("replay/meminfo.{:03d}", i),
                fmt::format("MemTotal:       125829120 kB\nMemFree:        {0} kB\n"
                            "MemAvailable:   {0} kB\n",
                            kb));
    }
    return (dir.path() / "replay").string();
  }

  ~WatchFixture() {
    // Whatever still runs (a restarted server is the watch's child, now orphaned) is stopped.
    (void)launch::stop_server(platform::Sysroot(), paths, 2s);
    for (const int pid : started) {
      int status = 0;
      ::waitpid(pid, &status, WNOHANG);
    }
  }
};

TEST(CliWatch, NothingToWatchSaysHowToStartOne) {
  WatchFixture f;
  const CliResult result = run_binary({"watch", "--once"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_TRUE(contains(result.out, "no llama-server started by gb10tune is running")) << result.out;
  EXPECT_TRUE(contains(result.out, "gb10tune launch")) << result.out;
  EXPECT_TRUE(contains(result.out, "--wait")) << result.out;
}

TEST(CliWatch, AFloorAboveTheWarningIsAUsageError) {
  WatchFixture f;
  const CliResult result =
      run_binary({"watch", "--wait", "--once", "--warn", "8G", "--floor", "10G"});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_TRUE(contains(result.out, "--floor 10.0 GiB is not below --warn 8.0 GiB")) << result.out;
  const CliResult bad = run_binary({"watch", "--wait", "--once", "--warn", "lots"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_TRUE(contains(bad.out, "--warn")) << bad.out;
}

// A level MemAvailable can never reach (above MemTotal, here the replayed 120 GiB machine's)
// is a usage error naming both figures, before anything is watched.
TEST(CliWatch, AThresholdAboveTheMachinesMemoryIsAUsageError) {
  WatchFixture f;
  const CliResult result = run_binary({"watch", "--wait", "--once", "--warn", "200G", "--floor",
                                       "100G", "--replay-meminfo", f.replay({40})});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_TRUE(contains(result.out,
                       "--warn 200.0 GiB is above this machine's memory (MemTotal "
                       "120.0 GiB)"))
      << result.out;
  EXPECT_FALSE(contains(result.out, "watching:")) << result.out;
}

// `--once` is a check for scripts: below the floor it says so and fails (exit 1), and the
// server runs on; only --act lets it stop the server.
TEST(CliWatch, OnceBelowTheFloorReportsAndLeavesTheServerRunning) {
  WatchFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  const CliResult result = run_binary(
      {"watch", "--once", "--warn", "12G", "--floor", "6G", "--replay-meminfo", f.replay({5.5})});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_TRUE(contains(result.out,
                       "floor: MemAvailable 5.5 GiB is below --floor 6.0 GiB: llama-server left "
                       "running (a check: --act stops it)"))
      << result.out;
  EXPECT_FALSE(contains(result.out, "stopping")) << result.out;
  EXPECT_FALSE(contains(result.out, "stopped:")) << result.out;
  EXPECT_TRUE(process_alive(pid));
  EXPECT_TRUE(std::filesystem::exists(f.paths.pid_file));
  EXPECT_FALSE(contains(read_text(f.paths.log), "==== gb10tune watch:"));

  const CliResult acted = run_binary({"watch", "--once", "--act", "--warn", "12G", "--floor", "6G",
                                      "--replay-meminfo", f.replay({5.5})});
  EXPECT_EQ(acted.exit_code, 1) << acted.out;
  EXPECT_TRUE(
      contains(acted.out, fmt::format("stopped: llama-server pid {} ended on SIGTERM", pid)))
      << acted.out;
  EXPECT_FALSE(process_alive(pid));
  reap_child(pid);
}

TEST(CliWatch, PlentyOfMemoryIsWatchedQuietly) {
  WatchFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  const CliResult result = run_binary({"watch", "--interval", "0.02", "--max-samples", "5",
                                       "--replay-meminfo", f.replay({40, 39, 41})});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_TRUE(contains(result.out, fmt::format("watching: llama-server pid {} at http://", pid)))
      << result.out;
  EXPECT_TRUE(contains(result.out, "warn below 11.2 GiB, stop below 5.6 GiB")) << result.out;
  EXPECT_FALSE(contains(result.out, "low:")) << result.out;
  EXPECT_TRUE(process_alive(pid));
}

TEST(CliWatch, BelowTheFloorSigtermLandsAndTheLogSaysWhy) {
  WatchFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  const CliResult result =
      run_binary({"watch", "--interval", "0.02", "--max-samples", "20", "--warn", "12G", "--floor",
                  "6G", "--replay-meminfo", f.replay({20, 11.5, 11.9, 5.5})});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_TRUE(contains(result.out, "low: MemAvailable 11.5 GiB is below --warn 12.0 GiB"))
      << result.out;
  EXPECT_TRUE(contains(result.out,
                       "floor: MemAvailable 5.5 GiB is below --floor 6.0 GiB: "
                       "stopping llama-server (server pid"))
      << result.out;
  EXPECT_TRUE(
      contains(result.out, fmt::format("stopped: llama-server pid {} ended on SIGTERM", pid)))
      << result.out;
  EXPECT_TRUE(contains(result.out, "watch with --restart")) << result.out;
  EXPECT_FALSE(process_alive(pid));
  reap_child(pid);
  EXPECT_FALSE(std::filesystem::exists(f.paths.pid_file));
  const std::string log = read_text(f.paths.log);
  EXPECT_TRUE(contains(log, fmt::format("watch: MemAvailable 5.5 GiB fell below the floor 6.0 "
                                        "GiB: stopping pid {}",
                                        pid)))
      << log;
  // The stop's own line says who stopped it.
  EXPECT_TRUE(contains(log, fmt::format("==== gb10tune watch: pid {} ended on SIGTERM", pid)))
      << log;
}

TEST(CliWatch, AServerIgnoringSigtermIsKilledAfterTheGrace) {
  WatchFixture f;
  const int pid = f.start({{"STANDIN_IGNORE_SIGTERM", "1"}});
  ASSERT_GT(pid, 0);
  const CliResult result =
      run_binary({"watch", "--interval", "0.02", "--max-samples", "3", "--grace", "0.3", "--floor",
                  "6G", "--json", "--replay-meminfo", f.replay({5})});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  std::vector<std::string> events;
  std::istringstream lines(result.out);
  for (std::string line; std::getline(lines, line);) {
    const auto doc = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << line;
    EXPECT_EQ(doc["command"], "watch");
    events.push_back(doc["event"].get<std::string>());
    if (doc["event"] == "stopped") {
      EXPECT_TRUE(contains(doc["message"].get<std::string>(), "killed with SIGKILL")) << line;
    }
    if (doc["event"] == "floor") {
      EXPECT_EQ(doc["pid"], pid);
      EXPECT_EQ(doc["mem_available_bytes"], 5ull << 30);
      EXPECT_EQ(doc["threshold_bytes"], 6ull << 30);
      EXPECT_TRUE(doc["rss_bytes"].is_number()) << line;
    }
  }
  EXPECT_EQ(events, (std::vector<std::string>{"watching", "low", "floor", "stopped", "ended"}));
  EXPECT_FALSE(process_alive(pid));
  reap_child(pid);
}

TEST(CliWatch, RestartBringsTheServerBackFromTheSameLaunchRecord) {
  WatchFixture f;
  const auto record_file = f.dir.path() / "stand-in-record.json";
  const int pid = f.start({{"STANDIN_RECORD", record_file.string()}});
  ASSERT_GT(pid, 0);
  const auto before = launch::read_launch_record(f.paths.record);
  ASSERT_TRUE(before) << before.error().message;
  const CliResult result = run_binary({"watch", "--interval", "0.05", "--max-samples", "40",
                                       "--floor", "6G", "--restart", "--restart-delay", "0.1",
                                       "--replay-meminfo", f.replay({20, 5, 20})});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_TRUE(contains(result.out, "stopped: llama-server pid")) << result.out;
  EXPECT_TRUE(contains(result.out, "restart: restarting llama-server (attempt 1")) << result.out;
  EXPECT_TRUE(contains(result.out, "restarted: llama-server runs again as pid")) << result.out;
  EXPECT_FALSE(process_alive(pid));
  reap_child(pid);
  const auto after = launch::read_launch_record(f.paths.record);
  ASSERT_TRUE(after) << after.error().message << "\n" << result.out;
  EXPECT_NE(after->pid, pid);
  EXPECT_TRUE(process_alive(after->pid));
  EXPECT_EQ(after->argv, before->argv);
  EXPECT_EQ(after->url, before->url);
  // The restarted server got the environment the first one ran with.
  const auto recorded = read_record(record_file);
  EXPECT_EQ(recorded["pid"], after->pid);
  EXPECT_EQ(recorded["env"]["STANDIN_LOAD_MS"], "100");
}

// Issue 22 item 5: a state directory its group may write is refused before the launch record
// is read: its argv is what --restart would run, its pid what the floor would signal.
TEST(CliWatch, GroupWritableStateDirIsRefusedBeforeTheRecordIsUsed) {
  WatchFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  const auto state = f.dir.path() / "gb10tune";
  const std::string refusal = make_group_writable(state);
  const CliResult result = run_binary({"watch", "--interval", "0.05", "--max-samples", "40",
                                       "--floor", "6G", "--restart", "--restart-delay", "0.1",
                                       "--replay-meminfo", f.replay({20, 5, 20})});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_TRUE(contains(result.out, refusal)) << result.out;
  EXPECT_FALSE(contains(result.out, "stopped: llama-server pid")) << result.out;
  EXPECT_TRUE(process_alive(pid));
  ASSERT_EQ(::chmod(state.c_str(), 0700), 0);  // for the fixture's stop
}

// Issue 22 item 1: the restart runs the record's argv[0] only if that binary may run; one in a
// directory anyone may write is refused, and never run.
TEST(CliWatch, RestartRefusesAnUntrustedBinaryInTheRecord) {
  WatchFixture f;
  const auto ran = f.dir.path() / "ran.json";
  const int pid = f.start({{"STANDIN_RECORD", ran.string()}});
  ASSERT_GT(pid, 0);
  auto record = launch::read_launch_record(f.paths.record);
  ASSERT_TRUE(record) << record.error().message;
  const auto open = copy_into_open_dir(f.dir, stand_in_server_path());
  record->argv.front() = open.string();
  ASSERT_TRUE(launch::write_launch_record(f.paths.record, *record));
  std::filesystem::remove(ran);  // written by the first server's start
  const CliResult result = run_binary(
      {"watch", "--interval", "0.05", "--max-samples", "40", "--floor", "6G", "--restart",
       "--restart-delay", "0.1", "--max-restarts", "1", "--replay-meminfo", f.replay({20, 5, 20})});
  EXPECT_EQ(result.exit_code, 5) << result.out;
  EXPECT_TRUE(contains(result.out, "refusing to run " + open.string())) << result.out;
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the restart ran " << open;
  reap_child(pid);
}

TEST(CliWatch, RestartsGiveUpAtTheCap) {
  WatchFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  // Low, then room for a restart for 3 s (30 samples), then low for good: the restarted
  // server is stopped too, and with --max-restarts 1 there is no second attempt.
  std::vector<double> memory = {20, 5};
  memory.insert(memory.end(), 30, 20);
  memory.push_back(5);
  const CliResult result = run_binary(
      {"watch", "--interval", "0.1", "--max-samples", "60", "--floor", "6G", "--restart",
       "--restart-delay", "0.1", "--max-restarts", "1", "--replay-meminfo", f.replay(memory)});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_TRUE(contains(result.out, "restarted: llama-server runs again as pid")) << result.out;
  EXPECT_TRUE(contains(result.out, "gave_up: no more restarts: 1 attempt in a row")) << result.out;
  EXPECT_FALSE(std::filesystem::exists(f.paths.pid_file));
  reap_child(pid);
}

TEST(CliWatch, ACrashIsReportedAndAStopWithGb10tuneStopEndsTheWatch) {
  WatchFixture f;
  const int pid = f.start();
  ASSERT_GT(pid, 0);
  // A cap of samples the watch never reaches (100 s): it ends on the crash, or not at all.
  const std::vector<std::string> watch = {"watch", "--interval", "0.05", "--max-samples", "2000"};
  {
    BackgroundRun crashed(watch, {});
    ASSERT_TRUE(crashed.child);
    // The watch has started: it named the server it watches.
    ASSERT_TRUE(crashed.wait_for_output(fmt::format("watching: llama-server pid {} at", pid), 60s))
        << read_text(crashed.output);
    ::kill(pid, SIGKILL);
    reap_child(pid);
    const auto exit = crashed.wait(60s);
    ASSERT_TRUE(exit) << "the watch did not end on the crash: " << read_text(crashed.output);
    const std::string out = read_text(crashed.output);
    EXPECT_EQ(exit->exit_status, 1) << out;
    EXPECT_TRUE(contains(out, "exited: llama-server exited without the watch stopping it")) << out;
  }

  std::filesystem::remove(f.paths.pid_file);
  const int second = f.start();
  ASSERT_GT(second, 0);
  BackgroundRun stopped(watch, {});
  ASSERT_TRUE(stopped.child);
  ASSERT_TRUE(stopped.wait_for_output(fmt::format("watching: llama-server pid {} at", second), 60s))
      << read_text(stopped.output);
  const CliResult stop = run_binary({"stop"});
  EXPECT_EQ(stop.exit_code, 0) << stop.out;
  reap_child(second);
  const auto exit = stopped.wait(60s);
  ASSERT_TRUE(exit) << "the watch did not end on the stop: " << read_text(stopped.output);
  const std::string out = read_text(stopped.output);
  EXPECT_EQ(exit->exit_status, 0) << out;
  EXPECT_TRUE(contains(out, "was stopped outside the watch")) << out;
}

TEST(CliWatch, PrintSystemdWritesTheWatchAndTheVerifyTimer) {
  WatchFixture f;
  const CliResult printed = run_binary(
      {"watch", "--print", "systemd", "--floor", "8G", "--restart", "--verify-every", "20"});
  EXPECT_EQ(printed.exit_code, 0) << printed.out;
  EXPECT_TRUE(contains(printed.out, "### gb10tune-watch.service")) << printed.out;
  EXPECT_TRUE(contains(printed.out, " watch --wait --floor 8G --restart\n")) << printed.out;
  EXPECT_TRUE(
      contains(printed.out, "Environment=\"XDG_STATE_HOME=" + f.dir.path().string() + "\"\n"))
      << printed.out;
  EXPECT_TRUE(contains(printed.out, "OnUnitActiveSec=20min")) << printed.out;
  const auto units = f.dir.path() / "units";
  const CliResult written =
      run_binary({"watch", "--print", "systemd", "--unit-dir", units.string()});
  EXPECT_EQ(written.exit_code, 0) << written.out;
  for (const char* name :
       {"gb10tune-watch.service", "gb10tune-verify.service", "gb10tune-verify.timer"}) {
    EXPECT_TRUE(std::filesystem::exists(units / name)) << name;
  }
  EXPECT_TRUE(contains(read_text(units / "gb10tune-verify.service"), " verify\n"));
}

}  // namespace
}  // namespace gb10tune::testing
