// The supervisor of `gb10tune watch`: samples memory on a fixed beat, feeds the samples to the
// policy (watch_policy) and carries out what it asks: stops the server below the floor, starts
// it again from its launch record on a thread of its own while sampling goes on, reaps the
// servers it started, and follows the pid file when `gb10tune stop` or a new launch takes over.
// The world comes in through a Sampler (/proc under a Sysroot), a ServerControl and a
// WatchClock; events go out to a sink, which renders them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/util/expected.hpp"
#include "gb10tune/watch/server_control.hpp"
#include "gb10tune/watch/watch_clock.hpp"
#include "gb10tune/watch/watch_policy.hpp"
#include "gb10tune/watch/watch_sampler.hpp"

namespace gb10tune::watch {

// How the watch runs (the options of `gb10tune watch`, resolved).
struct SupervisorOptions {
  Thresholds thresholds;
  RestartPolicy restart;          // restart.enabled: --restart
  double interval_s = 1;          // between samples
  double grace_s = 10;            // from SIGTERM to SIGKILL when the floor stops the server
  bool wait = false;              // with no server left, wait for the next launch instead of ending
  std::uint64_t max_samples = 0;  // end after this many samples; 0: never
  // Carry out what the events ask (the stop below the floor, restarts). false: a check
  // (`--once` without `--act`) that reports the floor, fails, and leaves the server alone.
  bool act = true;
};

// What the supervisor reads and acts through. `control` and `clock` must outlive it.
struct SupervisorWorld {
  platform::Sysroot sysroot;         // /proc/<pid>/environ of a server; /proc/meminfo at the start
  launch::StatePaths paths;          // the pid file, record and log of the watched server
  platform::Environment caller_env;  // a server's environment when its own cannot be read
  ServerControl* control = nullptr;
  WatchClock* clock = nullptr;
  std::function<void(const Event&)> emit;        // receives every event, in order
  std::function<std::string()> now_iso8601;      // a restarted server's launched_at; may be empty
  std::function<void(const Sample&)> on_sample;  // receives every sample (--metrics); may be empty
};

// A server being watched, and what starting it again needs.
struct WatchedServer {
  WatchedProcess process;
  launch::LaunchRecord record;
  platform::Environment env;  // what it runs with (its /proc/<pid>/environ), cleaned (K2)
};

// One watch, from its first sample to its end. Not copyable.
class Supervisor {
 public:
  Supervisor(SupervisorOptions options, SupervisorWorld world, Sampler sampler);
  // Aborts a restart still under way and waits for it.
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Watches `first` (none: waits for a launch), sampling at 0, interval, 2 × interval, … until
  // the watch ends, and returns its exit code: ok once max_samples were taken with a server
  // running or the server was stopped with `gb10tune stop`; failed when the floor stopped it
  // (or, without `act`, was crossed) or it exited (without restarts), or restarts were given up;
  // server_failed when they were given up after a failed start; interrupted on SIGINT or SIGTERM
  // (the server runs on). An Error (ExitCode::failed) when MemAvailable cannot be read.
  Expected<ExitCode> run(std::optional<launch::RunningServer> first);

 private:
  struct Restart;

  void emit(Event event);
  WatchedServer adopt(const launch::RunningServer& server) const;
  void start_watching(const launch::RunningServer& server, double t_s, const std::string& why);
  std::string reap(int pid);
  std::string limits() const;
  void begin(const std::optional<launch::RunningServer>& first);
  // Each returns an exit code when the watch ends.
  std::optional<Expected<ExitCode>> step(double t_s);
  std::optional<ExitCode> server_vanished(double t_s, Sample& sample);
  std::optional<ExitCode> handle(const Event& event, double t_s);
  std::optional<ExitCode> handle_all(const std::vector<Event>& events, double t_s);
  std::optional<ExitCode> server_exited(const Event& event, double t_s);
  std::optional<ExitCode> stop(const Event& floor);
  std::optional<ExitCode> start_restart(const Event& event, double t_s);
  std::optional<ExitCode> restart_failed(double t_s, const std::string& why);
  std::optional<ExitCode> collect_restart(double t_s);
  std::optional<ExitCode> server_down(double t_s, ExitCode code);
  void finish_restart(bool abort);

  SupervisorOptions m_options;
  SupervisorWorld m_world;
  Sampler m_sampler;
  WatchPolicy m_policy;
  std::optional<WatchedServer> m_server;        // the server watched now
  std::optional<WatchedServer> m_restart_from;  // the last server, to start again
  std::unique_ptr<Restart> m_restart;           // a restart under way
  std::set<int> m_children;                     // servers this watch started (it must reap them)
  bool m_last_start_failed = false;
  bool m_floor_crossed = false;  // without `act`: a sample was below the floor
};

}  // namespace gb10tune::watch
