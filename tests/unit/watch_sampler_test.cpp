// The watch's sampler against /proc trees that change between samples, the captured meminfo
// sequence, the event lines and the systemd units.
#include "gb10tune/watch/watch_sampler.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/watch/watch_events.hpp"
#include "gb10tune/watch/watch_units.hpp"
#include "support/fake_proc.hpp"
#include "support/systemd_unit_reader.hpp"
#include "support/test_context.hpp"

namespace gb10tune::watch {
namespace {

using testing::TempDir;

std::string meminfo_text(std::uint64_t available_kb) {
  return fmt::format(
      "MemTotal:       24730972 kB\nMemFree:        1000000 kB\n"
      "MemAvailable:   {} kB\nCached:         100 kB\n",
      available_kb);
}

std::string stat_text(int pid, char state, std::uint64_t start_ticks) {
  return testing::proc_stat_text(pid, "llama-server", state, start_ticks);
}

std::string status_text(std::uint64_t rss_kb) {
  return testing::proc_status_text("llama-server", rss_kb, 0);
}

TEST(WatchSampler, ReadsAMeminfoThatChangesBetweenSamples) {
  TempDir root;
  root.write("proc/meminfo", meminfo_text(20'000'000));
  root.write("proc/4242/stat", stat_text(4242, 'S', 777));
  root.write("proc/4242/status", status_text(3'000'000));
  int gpu_calls = 0;
  const Sampler sampler(platform::Sysroot(root.path()),
                        meminfo_from(platform::Sysroot(root.path())), [&gpu_calls](int pid) {
                          ++gpu_calls;
                          return std::optional<std::uint64_t>(pid == 4242 ? 5u << 20 : 0);
                        });
  const WatchedProcess server{4242, 777};
  const auto first = sampler.take(1.0, server);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_DOUBLE_EQ(first->t_s, 1.0);
  EXPECT_EQ(first->available_bytes, 20'000'000ull * 1024);
  EXPECT_TRUE(first->server_running);
  EXPECT_EQ(first->server_rss_bytes, 3'000'000ull * 1024);
  EXPECT_EQ(first->server_gpu_bytes, 5u << 20);

  // The machine fills up and the server grows.
  root.write("proc/meminfo", meminfo_text(4'000'000));
  root.write("proc/4242/status", status_text(9'000'000));
  const auto second = sampler.take(2.0, server);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->available_bytes, 4'000'000ull * 1024);
  EXPECT_EQ(second->server_rss_bytes, 9'000'000ull * 1024);

  // A zombie is not running; neither is a pid that now has another start time or is gone.
  root.write("proc/4242/stat", stat_text(4242, 'Z', 777));
  EXPECT_FALSE(sampler.take(3.0, server)->server_running);
  root.write("proc/4242/stat", stat_text(4242, 'S', 999));
  const auto reused = sampler.take(4.0, server);
  EXPECT_FALSE(reused->server_running);
  EXPECT_FALSE(reused->server_rss_bytes);
  EXPECT_FALSE(reused->server_gpu_bytes);
  std::filesystem::remove_all(root.path() / "proc/4242");
  EXPECT_FALSE(sampler.take(5.0, server)->server_running);
  EXPECT_FALSE(sampler.take(6.0, WatchedProcess{})->server_running);
  EXPECT_EQ(gpu_calls, 2);  // only while it ran
}

TEST(WatchSampler, AnUnreadableMeminfoIsAnErrorNamingTheFile) {
  TempDir root;
  const Sampler sampler(platform::Sysroot(root.path()),
                        meminfo_from(platform::Sysroot(root.path())), {});
  const auto sample = sampler.take(0, WatchedProcess{});
  ASSERT_FALSE(sample);
  EXPECT_NE(sample.error().message.find("meminfo"), std::string::npos) << sample.error().message;
}

TEST(WatchSampler, ReplaysTheCapturedSqueezeInOrderAndRepeatsTheLast) {
  std::vector<std::filesystem::path> files;
  for (int i = 0; i <= 5; ++i) {
    files.push_back(testing::fixture(fmt::format("watch/squeeze/meminfo.{:02d}", i)));
  }
  const Sampler sampler(platform::Sysroot("/nonexistent-gb10tune-root"), meminfo_sequence(files),
                        {});
  std::vector<std::uint64_t> kb;
  for (int i = 0; i < 8; ++i) {
    const auto sample = sampler.take(i, WatchedProcess{});
    ASSERT_TRUE(sample) << sample.error().message;
    kb.push_back(sample->available_bytes / 1024);
  }
  EXPECT_EQ(kb, (std::vector<std::uint64_t>{22222596, 21050160, 20033904, 19114448, 17606988,
                                            20759296, 20759296, 20759296}));
}

TEST(WatchSampler, TheCapturedSqueezeThroughThePolicyWarnsOnceAndStopsAtTheFloor) {
  std::vector<std::filesystem::path> files;
  for (int i = 0; i <= 5; ++i) {
    files.push_back(testing::fixture(fmt::format("watch/squeeze/meminfo.{:02d}", i)));
  }
  TempDir root;
  root.write("proc/7/stat", stat_text(7, 'S', 5));
  root.write("proc/7/status", status_text(1000));
  const Sampler sampler(platform::Sysroot(root.path()), meminfo_sequence(files), {});
  // warn 20 GiB, floor 17 GiB: 01 (20.07 GiB) is above the warning, 02 (19.1 GiB) below it,
  // 04 (16.8 GiB) below the floor.
  WatchPolicy policy(Thresholds{20ull << 30, 17ull << 30, 512ull << 20}, RestartPolicy{});
  std::vector<std::pair<int, EventKind>> seen;
  for (int i = 0; i <= 5; ++i) {
    const auto sample = sampler.take(i, WatchedProcess{7, 5});
    ASSERT_TRUE(sample);
    for (const Event& e : policy.observe(*sample)) {
      seen.emplace_back(i, e.kind);
    }
    if (!seen.empty() && seen.back().second == EventKind::floor) {
      (void)policy.stop_done(i, true);
    }
  }
  EXPECT_EQ(seen,
            (std::vector<std::pair<int, EventKind>>{{2, EventKind::low}, {4, EventKind::floor}}));
}

TEST(WatchEvents, TextAndJsonLinesCarryTheFigures) {
  Event e;
  e.kind = EventKind::floor;
  e.t_s = 12.5;
  e.available_bytes = 3ull << 30;
  e.sampled = true;
  e.threshold_bytes = 4ull << 30;
  e.server_rss_bytes = 20ull << 30;
  e.pid = 4242;
  const std::string text = render_event_text(e, "2026-12-01T11:00:00Z");
  EXPECT_EQ(text,
            "2026-12-01T11:00:00Z floor: MemAvailable 3.0 GiB is below --floor 4.0 GiB: stopping "
            "llama-server (server pid 4242: RSS 20.0 GiB)\n");
  const std::string line = render_event_json_line(e, "2026-12-01T11:00:00Z");
  ASSERT_EQ(line.find('\n'), line.size() - 1);
  const auto doc = nlohmann::json::parse(line);
  EXPECT_EQ(doc["command"], "watch");
  EXPECT_EQ(doc["event"], "floor");
  EXPECT_EQ(doc["mem_available_bytes"], 3ull << 30);
  EXPECT_EQ(doc["threshold_bytes"], 4ull << 30);
  EXPECT_EQ(doc["rss_bytes"], 20ull << 30);
  EXPECT_TRUE(doc["gpu_bytes"].is_null());
  EXPECT_EQ(doc["pid"], 4242);
  EXPECT_DOUBLE_EQ(doc["t_s"].get<double>(), 12.5);
  // An event the watch itself reports (no sample behind it) has no MemAvailable figure.
  Event stopped;
  stopped.kind = EventKind::stopped;
  stopped.message = "llama-server pid 4242 ended on SIGTERM after 0.2 s";
  const auto plain = event_to_json(stopped, "");
  EXPECT_TRUE(plain["mem_available_bytes"].is_null());
  EXPECT_TRUE(plain["at"].is_null());
  EXPECT_EQ(render_event_text(stopped, ""),
            "stopped: llama-server pid 4242 ended on SIGTERM after 0.2 s\n");
}

TEST(WatchEvents, JsonLinesCarryEachGpuWithNullForWhatIsUnknown) {
  Event e;
  e.kind = EventKind::low;
  e.sampled = true;
  gpu::GpuReading gpu;
  gpu.nvml_index = 1;
  gpu.name = "NVIDIA GB10";
  gpu.temperature_celsius = 48;
  gpu.power_watts = 31.5;
  e.gpus = {gpu};
  const auto doc = nlohmann::json::parse(render_event_json_line(e, ""));
  ASSERT_EQ(doc["gpus"].size(), 1U);
  const auto& first = doc["gpus"][0];
  EXPECT_EQ(first["index"], 1);
  EXPECT_EQ(first["name"], "NVIDIA GB10");
  EXPECT_EQ(first["temperature_celsius"], 48.0);
  EXPECT_EQ(first["power_watts"], 31.5);
  EXPECT_TRUE(first["power_limit_watts"].is_null());
  EXPECT_TRUE(first["memory_used_bytes"].is_null());
  EXPECT_TRUE(first["memory_total_bytes"].is_null());
  // The text line stays as short as before.
  EXPECT_EQ(render_event_text(e, "").find("48"), std::string::npos);
  e.gpus.clear();
  EXPECT_TRUE(event_to_json(e, "")["gpus"].empty());
}

TEST(WatchSampler, EverySampleReadsTheGpusWhetherTheServerRunsOrNot) {
  TempDir root;
  root.write("proc/meminfo", meminfo_text(20'000'000));
  int reads = 0;
  const Sampler sampler(platform::Sysroot(root.path()),
                        meminfo_from(platform::Sysroot(root.path())), {}, [&reads] {
                          gpu::GpuReading gpu;
                          gpu.temperature_celsius = 50 + ++reads;
                          return std::vector<gpu::GpuReading>{gpu};
                        });
  const auto first = sampler.take(1.0, WatchedProcess{});
  ASSERT_TRUE(first);
  ASSERT_EQ(first->gpus.size(), 1U);
  EXPECT_EQ(first->gpus[0].temperature_celsius, 51.0);
  EXPECT_EQ(sampler.take(2.0, WatchedProcess{})->gpus.at(0).temperature_celsius, 52.0);
  EXPECT_EQ(reads, 2);
}

TEST(WatchSampler, NvmlIsAskedWhereTheDriverListsAGpuOrALibraryIsNamed) {
  TempDir root;
  const testing::ScopedEnv devices{"FAKE_NVML_DEVICES", "1"};
  const testing::ScopedEnv temperature{"FAKE_NVML_TEMPERATURE", "64"};
  const auto backend = gpu::make_system_backend(GB10TUNE_FAKE_NVML);
  platform::Environment env;
  const platform::Sysroot bare(root.path());
  EXPECT_FALSE(gpu_sources(backend.get(), bare, env).readings);
  EXPECT_FALSE(gpu_sources(backend.get(), bare, env).process_bytes);
  root.write("proc/driver/nvidia/gpus/0000:01:00.0/information", "Model: NVIDIA H200\n");
  const auto listed = gpu_sources(backend.get(), bare, env);
  ASSERT_TRUE(listed.readings);
  EXPECT_EQ(listed.readings().at(0).temperature_celsius, 64.0);
  std::filesystem::remove_all(root.path() / "proc/driver");
  env.set("GB10TUNE_NVML_LIBRARY", GB10TUNE_FAKE_NVML);
  const auto chosen = gpu_sources(backend.get(), bare, env);
  ASSERT_TRUE(chosen.readings && chosen.process_bytes);
  EXPECT_EQ(chosen.process_bytes(4242), 0U);
  EXPECT_FALSE(gpu_sources(nullptr, bare, env).readings);
}

TEST(WatchUnits, TheWatchRunsBesideTheServerAndATimerRunsVerify) {
  WatchUnitsInput input;
  input.watch_argv = {"/opt/gb10tune/bin/gb10tune", "watch", "--wait", "--floor", "8GiB"};
  input.verify_argv = {"/opt/gb10tune/bin/gb10tune", "verify"};
  input.verify_every_min = 10;
  input.environment = {{"XDG_STATE_HOME", "/home/u/state dir"}};
  const auto rendered = render_watch_units(input);
  ASSERT_TRUE(rendered) << rendered.error().message;
  const std::vector<UnitFile>& files = *rendered;
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].name, "gb10tune-watch.service");
  EXPECT_NE(
      files[0].content.find("ExecStart=/opt/gb10tune/bin/gb10tune watch --wait --floor 8GiB\n"),
      std::string::npos)
      << files[0].content;
  EXPECT_NE(files[0].content.find("Environment=\"XDG_STATE_HOME=/home/u/state dir\"\n"),
            std::string::npos)
      << files[0].content;
  EXPECT_NE(files[0].content.find("SuccessExitStatus=130 143\n"), std::string::npos);
  // A server the watch restarted is in the watch's cgroup: stopping the watch must spare it.
  EXPECT_NE(files[0].content.find("KillMode=process\n"), std::string::npos);
  EXPECT_EQ(files[1].name, "gb10tune-verify.service");
  EXPECT_NE(files[1].content.find("Type=oneshot\n"), std::string::npos);
  EXPECT_NE(files[1].content.find("ExecStart=/opt/gb10tune/bin/gb10tune verify\n"),
            std::string::npos);
  EXPECT_EQ(files[2].name, "gb10tune-verify.timer");
  EXPECT_NE(files[2].content.find("OnUnitActiveSec=10min\n"), std::string::npos);
  EXPECT_NE(files[2].content.find("WantedBy=timers.target\n"), std::string::npos);
}

// Odd paths in the command and the variables read back, as systemd reads them, unchanged: no
// specifier or variable expands and no line break adds a directive.
TEST(WatchUnits, OddPathsAndVariablesReadBackUnchanged) {
  const std::string odd =
      "/srv/odd dir/100% $HOME ${X} 'q' \"d\" \\ ;x\nExecStartPre=/bin/false \xC3\xA9";
  WatchUnitsInput input;
  input.watch_argv = {"/opt/gb10 100% ;/gb10tune", "watch", "--wait", "--floor", odd};
  input.verify_argv = {"/opt/gb10 100% ;/gb10tune", "verify"};
  input.environment = {{"XDG_STATE_HOME", odd}, {"XDG_CONFIG_HOME", "/home/u/$HOME%%"}};
  const auto rendered = render_watch_units(input);
  ASSERT_TRUE(rendered) << rendered.error().message;
  for (const UnitFile& file : *rendered) {
    const testing::UnitReading reading = testing::read_unit(file.content);
    std::vector<std::string> problems = reading.problems;
    for (const testing::UnitAssignment& a : reading.assignments) {
      EXPECT_NE(a.key, "ExecStartPre") << file.content;
    }
    if (file.name == "gb10tune-verify.timer") {
      EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
      continue;
    }
    const auto exec = reading.values("Service", "ExecStart");
    ASSERT_EQ(exec.size(), 1u) << file.content;
    EXPECT_EQ(testing::unit_exec_argv(exec[0], problems),
              file.name == "gb10tune-watch.service" ? input.watch_argv : input.verify_argv);
    std::vector<std::pair<std::string, std::string>> environment;
    for (const std::string& value : reading.values("Service", "Environment")) {
      const auto pairs = testing::unit_environment(value, problems);
      environment.insert(environment.end(), pairs.begin(), pairs.end());
    }
    EXPECT_EQ(environment, input.environment) << file.content;
    EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems) << "\n" << file.content;
  }
}

// What a unit cannot carry is refused, naming it, before anything is written.
TEST(WatchUnits, AProgramOrValueSystemdWouldRefuseIsRefused) {
  WatchUnitsInput input;
  input.watch_argv = {"/home/o'brien/bin/gb10tune", "watch", "--wait"};
  input.verify_argv = {"/home/o'brien/bin/gb10tune", "verify"};
  const auto quoted = render_watch_units(input);
  ASSERT_FALSE(quoted);
  EXPECT_EQ(quoted.error().code, ExitCode::usage);
  EXPECT_NE(quoted.error().message.find("/home/o'brien/bin/gb10tune"), std::string::npos)
      << quoted.error().message;
  input.watch_argv = {"/opt/gb10tune", "watch"};
  input.verify_argv = {"/opt/gb10tune", "verify"};
  input.environment = {{"XDG_STATE_HOME", "/home/\xFF"}};
  const auto not_utf8 = render_watch_units(input);
  ASSERT_FALSE(not_utf8);
  EXPECT_NE(not_utf8.error().message.find("XDG_STATE_HOME"), std::string::npos);
}

}  // namespace
}  // namespace gb10tune::watch
