// The decision core of `gb10tune watch`: memory samples in, events out. Pure (no clock, no
// /proc, no signals): the caller samples, acts on the events that ask for an action (stop the
// server, restart it) and reports back how the action went.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/gpu/gpu_info.hpp"

namespace gb10tune::watch {

// The memory thresholds, in bytes of MemAvailable.
struct Thresholds {
  std::uint64_t warn_bytes = 0;        // below: warn (once per low spell)
  std::uint64_t floor_bytes = 0;       // below: stop the server
  std::uint64_t hysteresis_bytes = 0;  // a warning clears only at warn + this or above
};

// When and how often a stopped or exited server is started again.
struct RestartPolicy {
  bool enabled = false;
  double first_delay_s = 5;     // before the first attempt; doubled for each further one
  double max_delay_s = 300;     // the back-off's cap
  int max_attempts = 5;         // consecutive attempts before giving up (0: no limit)
  double stable_after_s = 600;  // a server that has run this long resets the count
  // Memory the server needs to start again (its plan's load figure; 0: unknown): a restart
  // waits until MemAvailable is at least floor + max(this, the last RSS seen).
  std::uint64_t need_bytes = 0;
};

// One reading of the machine and the server.
struct Sample {
  double t_s = 0;                      // seconds on a monotonic clock
  std::uint64_t available_bytes = 0;   // MemAvailable
  std::uint64_t swap_total_bytes = 0;  // SwapTotal (for --metrics)
  std::uint64_t swap_used_bytes = 0;   // SwapTotal − SwapFree
  bool server_running = false;         // the watched server's process exists (not a zombie)
  std::optional<std::uint64_t> server_rss_bytes;
  std::optional<std::uint64_t> server_gpu_bytes;  // NVML's per-process figure, where there is one
  std::vector<gpu::GpuReading> gpus;              // each GPU's sensors, where NVML reads them
};

// What happened, or what the caller must do.
enum class EventKind {
  watching,         // the watch began (caller)
  low,              // MemAvailable fell below --warn
  recovered,        // MemAvailable is back at --warn + hysteresis
  floor,            // MemAvailable fell below --floor: ACTION stop the server
  stopped,          // the server was stopped (caller)
  stop_failed,      // the stop did not work (caller)
  exited,           // the server exited without the watch stopping it
  restart_waiting,  // a restart is due but MemAvailable is too low for the server (once)
  restart,          // ACTION: start the server again (attempt, delay)
  restarted,        // the server runs again (caller)
  restart_failed,   // a start failed (caller)
  gave_up,          // max_attempts reached: no more restarts
  ended,            // the watch ends (caller)
};

// "watching", "low", "recovered", "floor", … (stable ids for --json).
std::string_view event_name(EventKind kind);

// One event; the figures are those of the sample that caused it.
struct Event {
  EventKind kind = EventKind::watching;
  double t_s = 0;
  std::uint64_t available_bytes = 0;
  bool sampled = false;               // available_bytes and the server figures are a sample's
  std::uint64_t threshold_bytes = 0;  // the threshold crossed (warn, floor, or restart need)
  std::optional<std::uint64_t> server_rss_bytes;
  std::optional<std::uint64_t> server_gpu_bytes;
  std::vector<gpu::GpuReading> gpus;  // the sample's GPU sensors (none: not sampled, no NVML)
  int attempt = 0;          // restart, restart_failed, restarted, gave_up: the attempt number
  double delay_s = 0;       // restart: the back-off waited before this attempt
  int pid = 0;              // filled by the caller
  bool check_only = false;  // floor: reported by a check that leaves the server alone (caller)
  std::string message;      // filled by the caller (why, how)
};

// The state machine. Feed every sample to observe(); act on `floor` (stop) and `restart`
// (start), then report with stop_done() / restart_done().
class WatchPolicy {
 public:
  WatchPolicy(Thresholds thresholds, RestartPolicy restart);

  // The events one sample causes, in order. `floor` fires once per running server; `low`
  // and `recovered` alternate (hysteresis); a running server that disappears without a stop
  // is `exited`; while the server is down and restarts are on, `restart` comes once its
  // back-off has passed and the memory is there (else `restart_waiting`, once).
  std::vector<Event> observe(const Sample& sample);

  // The stop asked for by `floor` is done (true: the server is down, and `gave_up` may follow
  // when restarts are on and spent) or failed (false: the server is taken as still running,
  // and `floor` may fire again on the next sample).
  std::vector<Event> stop_done(double t_s, bool stopped);

  // The restart asked for is done: the server runs (true) or the start failed (false: the
  // next attempt waits twice as long; `gave_up` when max_attempts is reached).
  std::vector<Event> restart_done(double t_s, bool started);

  // A server is watched from `t_s` (a new `gb10tune launch`, or the first one found after
  // idle()), with a fresh back-off; `need_bytes` replaces RestartPolicy::need_bytes.
  void adopted(double t_s, std::uint64_t need_bytes);

  // No server is watched any more (it was stopped by `gb10tune stop`, or the watch waits for
  // the next launch): only `low` and `recovered` until adopted().
  void idle();

  // True while a stopped or exited server waits for a restart that will come.
  bool waiting_for_restart() const { return m_state == State::down && m_restart.enabled; }
  // True once restarts were given up, or a server went down with restarts off.
  bool finished() const {
    return m_state == State::given_up || (m_state == State::down && !m_restart.enabled);
  }
  // The back-off before attempt `attempt` (1-based): first_delay × 2^(attempt−1), capped.
  double delay_before(int attempt) const;

 private:
  enum class State { running, stopping, down, starting, given_up, idle };

  Event make(EventKind kind, const Sample& sample, std::uint64_t threshold) const;
  // The server is down at `t_s`: schedules the next attempt, or gives up (into `events`).
  void went_down(double t_s, std::vector<Event>& events);

  Thresholds m_thresholds;
  RestartPolicy m_restart;
  State m_state = State::running;
  bool m_low = false;
  bool m_seen = false;           // a first sample was observed
  bool m_abort_said = false;     // floor said during this start
  int m_attempt = 0;             // attempts since the server last ran stably
  double m_restart_at = 0;       // when the next attempt may start
  double m_running_since = 0;    // when the server last (re)started
  bool m_waiting_said = false;   // restart_waiting printed for this attempt
  std::uint64_t m_last_rss = 0;  // the server's last RSS seen
};

}  // namespace gb10tune::watch
