// The watch supervisor with a clock that jumps, a fake ServerControl and a /proc tree written by
// the test: what it emits, what it asks of the control, and how the watch ends.
#include "gb10tune/watch/supervisor.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "support/fake_proc.hpp"
#include "support/fake_watch.hpp"
#include "support/test_context.hpp"

namespace gb10tune::watch {
namespace {

using testing::FakeProcess;
using testing::TempDir;
using namespace std::chrono_literals;

constexpr std::uint64_t kSupervisorGiB = 1ull << 30;

// A supervisor over a temporary /proc and state directory, with MemAvailable scripted per
// sample (the last figure repeats).
struct SupervisorRig {
  TempDir root;
  TempDir state;
  launch::StatePaths paths = launch::StatePaths::under(state.path() / "gb10tune");
  testing::FakeServerControl control{paths};
  testing::FakeWatchClock clock;
  std::vector<double> available_gib = {40};
  std::size_t meminfo_reads = 0;
  bool meminfo_broken = false;
  std::vector<Event> events;
  SupervisorOptions options;
  platform::Environment caller_env;

  SupervisorRig() {
    caller_env.set("PATH", "/usr/bin");
    caller_env.set("GGML_CUDA_ENABLE_UNIFIED_MEMORY", "1");
    options.thresholds = Thresholds{12 * kSupervisorGiB, 6 * kSupervisorGiB, kSupervisorGiB};
    options.max_samples = 8;
  }

  // The launch record of a server at pid `pid`.
  launch::LaunchRecord record_of(int pid) const {
    launch::LaunchRecord record;
    record.pid = pid;
    record.start_time_ticks = 777;
    record.server_path = "/opt/llama/llama-server";
    record.argv = {"/opt/llama/llama-server", "--port", "8080", "-ngl", "99"};
    record.env_removed = {"LLAMA_ARG_N_GPU_LAYERS"};
    record.url = "http://127.0.0.1:8080";
    record.log_path = (state.path() / "server.log").string();
    record.expected_load_bytes = 2 * kSupervisorGiB;
    return record;
  }

  // Writes server `pid` into /proc and returns it as the pid file's running server.
  launch::RunningServer server(int pid, std::map<std::string, std::string> environ = {}) const {
    FakeProcess process;
    process.pid = pid;
    process.environ = std::move(environ);
    testing::write_proc_process(root, process);
    return launch::RunningServer{pid, record_of(pid)};
  }

  void remove_process(int pid) const {
    std::filesystem::remove_all(root.path() / fmt::format("proc/{}", pid));
  }

  Expected<ExitCode> run(std::optional<launch::RunningServer> first) {
    MemInfoSource meminfo = [this]() -> Expected<sys::MemInfo> {
      if (meminfo_broken) {
        return Error{"cannot read /proc/meminfo: gone"};
      }
      sys::MemInfo info;
      const double gib = available_gib[std::min(meminfo_reads++, available_gib.size() - 1)];
      info.available_bytes = static_cast<std::uint64_t>(gib * static_cast<double>(kSupervisorGiB));
      return info;
    };
    SupervisorWorld world{platform::Sysroot(root.path()),
                          paths,
                          caller_env,
                          &control,
                          &clock,
                          [this](const Event& event) { events.push_back(event); },
                          [] { return std::string("2026-12-01T10:00:00Z"); },
                          {}};
    Supervisor supervisor(options, std::move(world),
                          Sampler(platform::Sysroot(root.path()), std::move(meminfo), {}));
    return supervisor.run(std::move(first));
  }

  // run(), for a watch that must end with an exit code: an Error fails the test.
  ExitCode watch(std::optional<launch::RunningServer> first) {
    const auto end = run(std::move(first));
    if (!end) {
      ADD_FAILURE() << end.error().message;
      return ExitCode::failed;
    }
    return *end;
  }

  std::vector<std::string> kinds() const {
    std::vector<std::string> out;
    for (const Event& event : events) {
      out.emplace_back(event_name(event.kind));
    }
    return out;
  }

  // The first event of `kind`; fails the test when there is none.
  Event first(EventKind kind) const {
    for (const Event& event : events) {
      if (event.kind == kind) {
        return event;
      }
    }
    ADD_FAILURE() << "no " << event_name(kind) << " event";
    return Event{};
  }
};

launch::PidFileStatus stale_status(int pid) {
  launch::PidFileStatus status;
  status.state = launch::PidFileState::stale;
  status.pid = pid;
  status.why = fmt::format("process {} has exited", pid);
  return status;
}

TEST(Supervisor, BelowTheFloorTheServerIsStoppedAndItsLogSaysWhy) {
  SupervisorRig rig;
  rig.root.write("proc/meminfo",
                 "MemTotal: 100000000 kB\nMemFree: 1 kB\nMemAvailable: 31457280 kB\n");
  rig.available_gib = {20, 11.5, 5.5};
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::failed);
  EXPECT_EQ(rig.kinds(),
            (std::vector<std::string>{"watching", "low", "floor", "stopped", "ended"}));
  const Event watching = rig.events.front();
  EXPECT_EQ(watching.pid, 4242);
  EXPECT_EQ(watching.message,
            "llama-server pid 4242 at http://127.0.0.1:8080: warn below 12.0 GiB, stop below "
            "6.0 GiB (SIGKILL 10 s after SIGTERM), every 1 s; MemAvailable 30.0 GiB now");
  EXPECT_TRUE(watching.sampled);
  EXPECT_EQ(rig.meminfo_reads, 3u) << "the figure at the start is not a sample";
  EXPECT_EQ(rig.first(EventKind::floor).pid, 4242);
  EXPECT_EQ(rig.control.stops, (std::vector<std::chrono::milliseconds>{10s}));
  ASSERT_EQ(rig.control.log_notes.size(), 1u);
  EXPECT_EQ(rig.control.log_notes[0].first, rig.state.path() / "server.log");
  EXPECT_EQ(rig.control.log_notes[0].second,
            "==== gb10tune watch: MemAvailable 5.5 GiB fell below the floor 6.0 GiB: stopping "
            "pid 4242");
  EXPECT_EQ(rig.first(EventKind::stopped).message,
            "llama-server pid 4242 ended on SIGTERM after 0.0 s");
  EXPECT_NE(rig.events.back().message.find("watch with --restart"), std::string::npos);
  EXPECT_TRUE(rig.control.reaped.empty()) << "a server the watch did not start is not reaped";
}

// A check (watch --once without --act) reports the floor and fails, and asks nothing of the
// control: no stop, no note in the server's log.
TEST(Supervisor, ACheckReportsTheFloorAndLeavesTheServerAlone) {
  SupervisorRig rig;
  rig.available_gib = {5.5};
  rig.options.max_samples = 1;
  rig.options.act = false;
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::failed);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "low", "floor"}));
  EXPECT_TRUE(rig.first(EventKind::floor).check_only);
  EXPECT_TRUE(rig.control.stops.empty());
  EXPECT_TRUE(rig.control.log_notes.empty());
}

TEST(Supervisor, ACheckAboveTheFloorPassesEvenWhenLow) {
  SupervisorRig rig;
  rig.available_gib = {8};
  rig.options.max_samples = 1;
  rig.options.act = false;
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::ok);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "low"}));
  EXPECT_TRUE(rig.control.stops.empty());
}

TEST(Supervisor, AServerWithoutALogPathInItsRecordGetsTheNoteInTheStateLog) {
  SupervisorRig rig;
  rig.available_gib = {5};
  auto server = rig.server(4242);
  server.record.log_path.clear();
  rig.watch(server);
  ASSERT_EQ(rig.control.log_notes.size(), 1u);
  EXPECT_EQ(rig.control.log_notes[0].first, rig.paths.log);
}

TEST(Supervisor, AFailedStopIsReportedAndTheFloorFiresAgain) {
  SupervisorRig rig;
  rig.available_gib = {5};
  rig.options.max_samples = 2;
  rig.control.stop_answer = Error{"kill: operation not permitted"};
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::ok) << "the server still runs";
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "low", "floor", "stop_failed",
                                                   "floor", "stop_failed"}));
  EXPECT_EQ(rig.first(EventKind::stop_failed).message,
            "could not stop llama-server pid 4242: kill: operation not permitted");
}

TEST(Supervisor, ACrashIsToldApartFromAStopAfterThePidFileHadTimeToGo) {
  SupervisorRig rig;
  rig.clock.before_sample = [&rig](int n) {
    if (n == 2) {
      rig.remove_process(4242);
      rig.control.status = stale_status(4242);
    }
  };
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::failed);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "exited"}));
  EXPECT_EQ(rig.first(EventKind::exited).pid, 4242);
  EXPECT_EQ(rig.first(EventKind::exited).message,
            "its pid file remains, so it was not `gb10tune stop`: a crash or a kill");
  EXPECT_EQ(rig.clock.slept, (std::vector<double>{0.3}));
}

TEST(Supervisor, AStopOutsideTheWatchEndsItWithoutAFailure) {
  SupervisorRig rig;
  rig.clock.before_sample = [&rig](int n) {
    if (n == 1) {
      rig.remove_process(4242);
      rig.control.status = launch::PidFileStatus{};
    }
  };
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::ok);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "ended"}));
  EXPECT_EQ(rig.events.back().message,
            "llama-server pid 4242 was stopped outside the watch (its pid file is gone, as "
            "`gb10tune stop` leaves it): nothing left to watch");
  EXPECT_TRUE(rig.clock.slept.empty());
}

TEST(Supervisor, WithWaitAStoppedServerIsFollowedByTheNextLaunch) {
  SupervisorRig rig;
  rig.options.wait = true;
  rig.clock.before_sample = [&rig](int n) {
    if (n == 1) {
      rig.remove_process(4242);
      rig.control.status = launch::PidFileStatus{};
    }
    if (n == 3) {
      rig.control.status = testing::running_status(5000, rig.server(5000).record);
    }
  };
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::ok);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "watching", "watching"}));
  EXPECT_NE(rig.events[1].message.find("waiting for the next `gb10tune launch`"),
            std::string::npos);
  EXPECT_EQ(rig.events[2].message, "llama-server pid 5000 at http://127.0.0.1:8080");
  EXPECT_EQ(rig.events[2].pid, 5000);
}

TEST(Supervisor, ANewLaunchReplacesTheWatchedServer) {
  SupervisorRig rig;
  rig.available_gib = {40, 40, 11};
  rig.clock.before_sample = [&rig](int n) {
    if (n == 1) {
      rig.remove_process(4242);
      rig.control.status = testing::running_status(5000, rig.server(5000).record);
    }
  };
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::ok);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "watching", "low"}));
  EXPECT_EQ(rig.events[1].message,
            "pid 4242 was replaced by a new launch: llama-server pid 5000 at "
            "http://127.0.0.1:8080");
  EXPECT_EQ(rig.first(EventKind::low).pid, 5000);
}

TEST(Supervisor, WaitingWithoutAServerWatchesTheFirstLaunch) {
  SupervisorRig rig;
  rig.options.wait = true;
  rig.clock.before_sample = [&rig](int n) {
    if (n == 2) {
      rig.control.status = testing::running_status(5000, rig.server(5000).record);
    }
  };
  EXPECT_EQ(rig.watch(std::nullopt), ExitCode::ok);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "watching"}));
  EXPECT_EQ(rig.events[0].message,
            "no llama-server runs; waiting for `gb10tune launch`: warn below 12.0 GiB, stop "
            "below 6.0 GiB (SIGKILL 10 s after SIGTERM), every 1 s");
  EXPECT_EQ(rig.events[1].t_s, 2);
}

TEST(Supervisor, RestartRunsTheRecordAgainWithTheEnvironmentCleaned) {
  SupervisorRig rig;
  rig.options.restart = restart_policy(true, 1, 8, 3);
  rig.available_gib = {20, 5, 20};
  launch::StartResult started;
  started.pid = 5001;
  started.start_time_ticks = 888;
  started.to_ready = 1500ms;
  rig.control.starts = {testing::FakeStartScript{started, 0}};
  FakeProcess restarted;
  restarted.pid = 5001;
  restarted.start_ticks = 888;
  testing::write_proc_process(rig.root, restarted);
  const auto first = rig.server(4242, {{"GGML_CUDA_ENABLE_UNIFIED_MEMORY", "0"},
                                       {"LLAMA_ARG_N_GPU_LAYERS", "10"},
                                       {"PATH", "/opt/bin"}});
  EXPECT_EQ(rig.watch(first), ExitCode::ok);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "low", "floor", "stopped",
                                                   "recovered", "restart", "restarted"}));
  EXPECT_EQ(rig.first(EventKind::restarted).message,
            "llama-server runs again as pid 5001 at http://127.0.0.1:8080 (ready after 1.5 s)");
  ASSERT_EQ(rig.control.start_requests.size(), 1u);
  const launch::StartRequest& request = rig.control.start_requests[0];
  EXPECT_EQ(request.argv, first.record.argv);
  EXPECT_EQ(request.record.argv, first.record.argv);
  EXPECT_EQ(request.record.launched_at, "2026-12-01T10:00:00Z");
  EXPECT_EQ(request.paths.pid_file, rig.paths.pid_file);
  EXPECT_EQ(request.url.port, 8080);
  EXPECT_EQ(request.env.get("PATH"), "/opt/bin") << "the environment the server ran with";
  EXPECT_FALSE(request.env.get("GGML_CUDA_ENABLE_UNIFIED_MEMORY")) << "K2";
  EXPECT_FALSE(request.env.get("LLAMA_ARG_N_GPU_LAYERS")) << "removed at launch, removed again";
  // The lock was released once the start had its outcome.
  EXPECT_TRUE(launch::LaunchLock::acquire(rig.paths));
}

TEST(Supervisor, AServerWhoseEnvironmentCannotBeReadRestartsWithTheCallersCleaned) {
  SupervisorRig rig;
  rig.options.restart = restart_policy(true, 1, 8, 1);
  rig.available_gib = {5, 20};
  rig.watch(rig.server(4242));  // no /proc/4242/environ
  ASSERT_EQ(rig.control.start_requests.size(), 1u);
  const platform::Environment& env = rig.control.start_requests[0].env;
  EXPECT_EQ(env.get("PATH"), "/usr/bin");
  EXPECT_FALSE(env.contains("GGML_CUDA_ENABLE_UNIFIED_MEMORY"));
}

TEST(Supervisor, AServerItRestartedIsReapedAndItsExitSaid) {
  SupervisorRig rig;
  rig.options.restart = restart_policy(true, 1, 8, 3);
  rig.available_gib = {20, 5, 20};
  launch::StartResult started;
  started.pid = 5001;
  started.start_time_ticks = 888;
  rig.control.starts = {testing::FakeStartScript{started, 0}};
  FakeProcess restarted;
  restarted.pid = 5001;
  restarted.start_ticks = 888;
  testing::write_proc_process(rig.root, restarted);
  rig.clock.before_sample = [&rig](int n) {
    if (n == 5) {
      rig.remove_process(5001);
      rig.control.status = stale_status(5001);
      rig.control.exits[5001] = platform::ChildExit{-1, 9, false};
    }
  };
  rig.options.max_samples = 6;
  rig.watch(rig.server(4242));
  const Event exited = rig.first(EventKind::exited);
  EXPECT_EQ(exited.pid, 5001);
  EXPECT_EQ(exited.message, "killed by signal 9 (the kernel's OOM killer sends SIGKILL)");
  EXPECT_TRUE(rig.control.exits.empty());
}

TEST(Supervisor, FailedRestartsAreGivenUpWithTheServerFailedCode) {
  SupervisorRig rig;
  rig.options.restart = restart_policy(true, 1, 8, 1);
  rig.available_gib = {5, 20};
  rig.control.starts = {
      testing::FakeStartScript{Error{"llama-server exited during load\nthe log's last lines"}, 0}};
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::server_failed);
  EXPECT_EQ(rig.kinds(),
            (std::vector<std::string>{"watching", "low", "floor", "stopped", "recovered", "restart",
                                      "restart_failed", "gave_up"}));
  EXPECT_EQ(rig.first(EventKind::restart_failed).message,
            "llama-server did not start again: llama-server exited during load");
}

// A server of `launch --foreground` belongs to its service manager: watch starts no copy of
// its own (and watches the one the manager starts: ANewLaunchTakesTheRestartsPlace).
TEST(Supervisor, AForegroundServerIsRestartedByItsServiceManagerNotByWatch) {
  SupervisorRig rig;
  rig.options.restart = restart_policy(true, 1, 8, 1);
  rig.available_gib = {5, 20};
  launch::RunningServer first = rig.server(4242);
  first.record.foreground = true;
  EXPECT_EQ(rig.watch(first), ExitCode::server_failed);
  EXPECT_EQ(rig.kinds(),
            (std::vector<std::string>{"watching", "low", "floor", "stopped", "recovered", "restart",
                                      "restart_failed", "gave_up"}));
  EXPECT_TRUE(rig.first(EventKind::restart_failed)
                  .message.starts_with("llama-server was started by `gb10tune launch "
                                       "--foreground` under a service manager"));
  EXPECT_TRUE(rig.control.start_requests.empty());
}

TEST(Supervisor, TheFloorDuringARestartAbortsIt) {
  SupervisorRig rig;
  rig.options.restart = restart_policy(true, 1, 8, 3);
  rig.available_gib = {5, 20, 5, 20};
  rig.options.max_samples = 4;
  rig.control.starts = {testing::FakeStartScript{launch::StartResult{}, -1}};
  rig.watch(rig.server(4242));
  EXPECT_EQ(rig.control.aborted_starts, 1);
  // The second floor comes while the start is under way: it is aborted, not stopped, and its
  // failure is collected on the next sample.
  EXPECT_EQ(rig.kinds(),
            (std::vector<std::string>{"watching", "low", "floor", "stopped", "recovered", "restart",
                                      "low", "floor", "restart_failed", "recovered"}));
  std::vector<Event> floors;
  for (const Event& event : rig.events) {
    if (event.kind == EventKind::floor) {
      floors.push_back(event);
    }
  }
  ASSERT_EQ(floors.size(), 2u);
  EXPECT_EQ(floors[1].message, "aborting the restart in progress");
  EXPECT_EQ(rig.control.stops.size(), 1u) << "nothing runs to be stopped";
  EXPECT_EQ(rig.first(EventKind::restart_failed).message,
            "llama-server did not start again: the start was aborted");
}

TEST(Supervisor, ALaunchHoldingTheLockFailsTheRestart) {
  SupervisorRig rig;
  rig.options.restart = restart_policy(true, 1, 8, 1);
  rig.available_gib = {5, 20};
  rig.control.lock_error = Error{"another gb10tune launch (pid 77) is starting a server"};
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::server_failed);
  EXPECT_EQ(rig.first(EventKind::restart_failed).message,
            "another gb10tune launch (pid 77) is starting a server");
  EXPECT_TRUE(rig.control.start_requests.empty());
}

// Also for a server of `launch --foreground`, whose manager's start is the one watched.
TEST(Supervisor, ANewLaunchTakesTheRestartsPlace) {
  for (const bool foreground : {false, true}) {
    SCOPED_TRACE(foreground ? "foreground" : "detached");
    SupervisorRig rig;
    rig.options.restart = restart_policy(true, 1, 8, 3);
    rig.available_gib = {5, 20};
    rig.clock.before_sample = [&rig](int n) {
      if (n == 1) {
        // Launched between the sample's look at the pid file and the restart's own.
        const launch::PidFileStatus launched =
            testing::running_status(5000, rig.server(5000).record);
        rig.control.next_statuses = {launch::PidFileStatus{}, launched};
        rig.control.status = launched;
      }
    };
    launch::RunningServer first = rig.server(4242);
    first.record.foreground = foreground;
    EXPECT_EQ(rig.watch(first), ExitCode::ok);
    EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "low", "floor", "stopped",
                                                     "recovered", "restart", "watching"}));
    EXPECT_EQ(rig.events.back().message,
              "a new launch took the restart's place: llama-server pid 5000 at "
              "http://127.0.0.1:8080");
    EXPECT_TRUE(rig.control.start_requests.empty());
  }
}

TEST(Supervisor, AStalePidFileIsClearedBeforeTheRestart) {
  SupervisorRig rig;
  rig.options.restart = restart_policy(true, 1, 8, 1);
  rig.available_gib = {5, 20};
  rig.control.stop_answer = launch::StopResult{};
  rig.clock.before_sample = [&rig](int n) {
    if (n == 1) {
      rig.control.status = stale_status(4242);  // the stop left it (say, a write that failed)
    }
  };
  rig.watch(rig.server(4242));
  EXPECT_EQ(rig.control.stale_cleared, 1);
  EXPECT_EQ(rig.control.start_requests.size(), 1u);
}

TEST(Supervisor, AnInterruptEndsTheWatchAndTheServerRunsOn) {
  SupervisorRig rig;
  rig.clock.interrupt_at = 2;
  EXPECT_EQ(rig.watch(rig.server(4242)), ExitCode::interrupted);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"watching", "ended"}));
  EXPECT_EQ(rig.events.back().message, "interrupted (SIGINT or SIGTERM); the server runs on");
  EXPECT_TRUE(rig.control.stops.empty());
}

TEST(Supervisor, AnUnreadableMemAvailableEndsTheWatchWithAnError) {
  SupervisorRig rig;
  rig.meminfo_broken = true;
  const auto end = rig.run(rig.server(4242));
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().code, ExitCode::failed);
  EXPECT_EQ(end.error().message, "MemAvailable cannot be read: cannot read /proc/meminfo: gone");
}

}  // namespace
}  // namespace gb10tune::watch
