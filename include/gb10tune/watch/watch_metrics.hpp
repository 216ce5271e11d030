// What `gb10tune watch --metrics` serves: the latest sample and counts of the watch's events,
// rendered in Prometheus' text exposition format (version 0.0.4), names and units after its
// conventions (gb10tune_watch_*, base units: _bytes, _celsius, _watts; counters _total).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "gb10tune/util/expected.hpp"
#include "gb10tune/util/host_port.hpp"
#include "gb10tune/watch/watch_policy.hpp"

namespace gb10tune::watch {

// The figures of the exposition.
struct WatchMetrics {
  Thresholds thresholds;
  std::uint64_t plan_bytes = 0;  // the watched server's planned load figure; 0 when unknown
  std::optional<Sample> last;    // the latest sample; none before the first
  std::uint64_t samples = 0;
  std::uint64_t warnings = 0;          // `low` events
  std::uint64_t stops = 0;             // `stopped` events (the floor stopped the server)
  std::uint64_t exits = 0;             // `exited` events (the server ended by itself)
  std::uint64_t restarts = 0;          // `restarted` events
  std::uint64_t restart_failures = 0;  // `restart_failed` events
  bool gave_up = false;                // a `gave_up` event came
};

// Counts `event` into `metrics` (low, stopped, exited, restarted, restart_failed, gave_up; the
// plan figure of a `watching` event's server is kept by the caller). Never fails.
void count_event(WatchMetrics& metrics, const Event& event);

// The exposition of `metrics`: # HELP and # TYPE for every family, one line per value, the
// server's figures only while a sample saw it running; the GPUs' sensors one line per GPU
// (label gpu="INDEX"; gpu_info also names it), a figure NVML does not give left out (a family
// no GPU has, entirely). Never fails.
std::string render_prometheus(const WatchMetrics& metrics);

// The address of --metrics: "PORT", ":PORT", "ADDR:PORT" or "[V6]:PORT", on 127.0.0.1 unless
// an address is given. A usage Error naming --metrics, the text and the forms it takes.
Expected<HostPort> parse_metrics_address(std::string_view text);

// WatchMetrics shared between the sampling thread and the thread that serves /metrics.
class MetricsBoard {
 public:
  explicit MetricsBoard(Thresholds thresholds, std::uint64_t plan_bytes = 0);
  void sample(const Sample& sample);
  void event(const Event& event);
  void plan(std::uint64_t plan_bytes);
  // render_prometheus of the figures now.
  std::string exposition() const;

 private:
  mutable std::mutex m_mutex;
  WatchMetrics m_metrics;
};

}  // namespace gb10tune::watch
