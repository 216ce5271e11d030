// What a watch begins with: the server, the thresholds from the options or the launch record,
// the restart policy, the replayed meminfo folder and the unit files written for systemd.
#include "gb10tune/watch/watch_setup.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "gb10tune/launch/recorded_plan.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/watch/watch_sampler.hpp"
#include "gb10tune/watch/watch_units.hpp"
#include "support/test_context.hpp"

namespace gb10tune::watch {
namespace {

using testing::TempDir;

constexpr std::uint64_t kSetupGiB = 1ull << 30;

launch::LaunchRecord record_with_reserve(const nlohmann::json& value) {
  launch::LaunchRecord record;
  record.plan = {{"settings", {{"reserve", {{"value", value}, {"source", "profile"}}}}}};
  record.planned = launch::read_recorded_plan(record.plan);
  return record;
}

TEST(WatchSetup, TheServerToWatchIsThePidFilesOrNoneWithWait) {
  launch::PidFileStatus running;
  running.state = launch::PidFileState::running;
  running.pid = 4242;
  running.server = launch::RunningServer{4242, launch::LaunchRecord{}};
  const auto found = server_to_watch(running, false);
  ASSERT_TRUE(found);
  ASSERT_TRUE(*found);
  EXPECT_EQ((*found)->pid, 4242);

  const auto waiting = server_to_watch(launch::PidFileStatus{}, true);
  ASSERT_TRUE(waiting);
  EXPECT_FALSE(*waiting);

  const auto none = server_to_watch(launch::PidFileStatus{}, false);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ExitCode::failed);
  EXPECT_EQ(none.error().message,
            "no llama-server started by gb10tune is running; start one with `gb10tune launch`, "
            "or pass --wait to wait for one");

  launch::PidFileStatus stale;
  stale.state = launch::PidFileState::stale;
  stale.why = "process 4242 has exited";
  const auto gone = server_to_watch(stale, false);
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().message.find(
                "is running (the pid file is stale: process 4242 has exited); start one"),
            std::string::npos)
      << gone.error().message;
}

TEST(WatchSetup, TheWarningDefaultsToThePlansReserve) {
  const launch::LaunchRecord record = record_with_reserve("8GB");
  EXPECT_EQ(recorded_reserve(&record), 8'000'000'000ull);
  const auto thresholds = resolve_thresholds(ThresholdChoice{}, &record);
  ASSERT_TRUE(thresholds);
  EXPECT_EQ(thresholds->warn_bytes, 8'000'000'000ull);
  EXPECT_EQ(thresholds->floor_bytes, 4'000'000'000ull);
  EXPECT_EQ(thresholds->hysteresis_bytes, kSetupGiB);
  // No record, or one whose reserve is not a size: the built-in reserve.
  EXPECT_EQ(recorded_reserve(nullptr), plan::kDefaultReserveBytes);
  const launch::LaunchRecord odd = record_with_reserve(12);
  EXPECT_EQ(recorded_reserve(&odd), plan::kDefaultReserveBytes);
  const launch::LaunchRecord junk = record_with_reserve("lots");
  EXPECT_EQ(recorded_reserve(&junk), plan::kDefaultReserveBytes);
}

TEST(WatchSetup, GivenThresholdsWinAndTheFloorMustBeBelowTheWarning) {
  const launch::LaunchRecord record = record_with_reserve("8GB");
  ThresholdChoice given;
  given.warn = 20 * kSetupGiB;
  given.hysteresis = 0;
  const auto thresholds = resolve_thresholds(given, &record);
  ASSERT_TRUE(thresholds);
  EXPECT_EQ(thresholds->warn_bytes, 20 * kSetupGiB);
  EXPECT_EQ(thresholds->floor_bytes, 10 * kSetupGiB);
  EXPECT_EQ(thresholds->hysteresis_bytes, 0u);

  given.warn = 8 * kSetupGiB;
  given.floor = 10 * kSetupGiB;
  const auto refused = resolve_thresholds(given, nullptr);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ExitCode::usage);
  EXPECT_EQ(refused.error().message,
            "--floor 10.0 GiB is not below --warn 8.0 GiB: the server would be stopped without a "
            "warning first; lower --floor or raise --warn");
  given.floor = given.warn;
  EXPECT_FALSE(resolve_thresholds(given, nullptr));
}

TEST(WatchSetup, TheBackOffsCapIsAtLeastTheFirstDelay) {
  const RestartPolicy policy = restart_policy(true, 60, 10, 0);
  EXPECT_TRUE(policy.enabled);
  EXPECT_EQ(policy.first_delay_s, 60);
  EXPECT_EQ(policy.max_delay_s, 60);
  EXPECT_EQ(policy.max_attempts, 0);
  EXPECT_EQ(restart_policy(false, 5, 300, 5).max_delay_s, 300);
}

TEST(WatchSetup, AReplayFolderIsReadInNameOrderAndAnEmptyOneRefused) {
  TempDir dir;
  dir.write("replay/meminfo.002", "MemTotal: 9 kB\nMemFree: 1 kB\nMemAvailable: 3 kB\n");
  dir.write("replay/meminfo.001", "MemTotal: 9 kB\nMemFree: 1 kB\nMemAvailable: 2 kB\n");
  auto replay = meminfo_replay(dir.path() / "replay");
  ASSERT_TRUE(replay) << replay.error().message;
  EXPECT_EQ((*replay)()->available_bytes, 2048u);
  EXPECT_EQ((*replay)()->available_bytes, 3072u);
  EXPECT_EQ((*replay)()->available_bytes, 3072u);

  std::filesystem::create_directories(dir.path() / "empty");
  for (const char* folder : {"empty", "missing"}) {
    const auto refused = meminfo_replay(dir.path() / folder);
    ASSERT_FALSE(refused) << folder;
    EXPECT_EQ(refused.error().code, ExitCode::usage);
    EXPECT_EQ(refused.error().message,
              "--replay-meminfo " + (dir.path() / folder).string() + " holds no files");
  }
}

TEST(WatchSetup, TheUnitsRunThisBinaryWithTheOptionsGivenAndTheStateVariables) {
  platform::Environment env;
  env.set("XDG_STATE_HOME", "/srv/state");
  env.set("HOME", "/home/me");
  const WatchUnitsInput input =
      watch_units_input(std::string("/opt/gb10tune"), {"--floor", "8G", "--restart"}, 20, env);
  EXPECT_EQ(input.watch_argv, (std::vector<std::string>{"/opt/gb10tune", "watch", "--wait",
                                                        "--floor", "8G", "--restart"}));
  EXPECT_EQ(input.verify_argv, (std::vector<std::string>{"/opt/gb10tune", "verify"}));
  EXPECT_EQ(input.verify_every_min, 20);
  EXPECT_EQ(input.environment,
            (std::vector<std::pair<std::string, std::string>>{{"XDG_STATE_HOME", "/srv/state"}}));
  const WatchUnitsInput unknown = watch_units_input(std::nullopt, {}, 15, platform::Environment());
  EXPECT_EQ(unknown.watch_argv, (std::vector<std::string>{"gb10tune", "watch", "--wait"}));
  EXPECT_TRUE(unknown.environment.empty());
}

TEST(WatchSetup, UnitFilesAreWrittenReadableByAllIntoTheirFolder) {
  TempDir dir;
  const auto units = dir.path() / "a" / "units";
  ASSERT_TRUE(create_unit_dir(units));
  const auto written = write_unit_file(units, UnitFile{"gb10tune-watch.service", "[Unit]\n"});
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(*written, units / "gb10tune-watch.service");
  EXPECT_EQ(testing::read_text(*written), "[Unit]\n");
  struct stat st {};
  ASSERT_EQ(::stat(written->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);

  dir.write("file", "in the way");
  const auto blocked = create_unit_dir(dir.path() / "file" / "units");
  ASSERT_FALSE(blocked);
  EXPECT_EQ(blocked.error().code, ExitCode::usage);
  EXPECT_NE(blocked.error().message.find("cannot create --unit-dir " +
                                         (dir.path() / "file" / "units").string()),
            std::string::npos)
      << blocked.error().message;
  const auto refused = write_unit_file(dir.path() / "missing", UnitFile{"x.service", ""});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ExitCode::usage);
}

// A level at or above MemTotal can never be reached by MemAvailable: a usage error naming the
// option, its size and MemTotal (a 25 GB machine given --warn 30G, as a new user did).
TEST(WatchSetup, ALevelAboveTheMachinesMemoryIsAUsageError) {
  const std::uint64_t total = 24'389'000'000ull;  // MemTotal of a "25 GB" machine
  ThresholdChoice given;
  given.warn = 30 * kSetupGiB;
  given.floor = 25 * kSetupGiB;
  const Status refused = thresholds_within_memory(given, total);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ExitCode::usage);
  EXPECT_EQ(refused.error().message,
            "--warn 30.0 GiB is above this machine's memory (MemTotal 22.7 GiB): MemAvailable "
            "can never reach it, so the watch would act at the first sample; give --warn a size "
            "below 22.7 GiB");
  given.warn = 23 * kSetupGiB;
  given.floor = 22'389'000'000ull;
  EXPECT_EQ(thresholds_within_memory(given, 22'389'000'000ull).error().message.substr(0, 8),
            "--warn 2");
  given.warn.reset();
  const Status floor = thresholds_within_memory(given, 22'389'000'000ull);
  ASSERT_FALSE(floor);
  EXPECT_EQ(floor.error().message.substr(0, 37), "--floor 20.9 GiB is all of this machi");
  given.floor = 10 * kSetupGiB;
  EXPECT_TRUE(thresholds_within_memory(given, total));
  EXPECT_TRUE(thresholds_within_memory(ThresholdChoice{}, total)) << "defaults are not checked";
}

}  // namespace
}  // namespace gb10tune::watch
