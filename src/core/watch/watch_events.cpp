#include "gb10tune/watch/watch_events.hpp"

#include <fmt/format.h>

#include "gb10tune/render/document.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::watch {

namespace {

using nlohmann::json;

// The figure, or null when it is unknown.
template <class T>
json figure_or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

// One GPU's sensors: its NVML index and name, then each figure (null: NVML does not give it).
json gpu_reading_json(const gpu::GpuReading& gpu) {
  return {{"index", gpu.nvml_index},
          {"name", gpu.name.empty() ? json(nullptr) : json(gpu.name)},
          {"temperature_celsius", figure_or_null(gpu.temperature_celsius)},
          {"power_watts", figure_or_null(gpu.power_watts)},
          {"power_limit_watts", figure_or_null(gpu.power_limit_watts)},
          {"memory_used_bytes", figure_or_null(gpu.memory_used_bytes)},
          {"memory_total_bytes", figure_or_null(gpu.memory_total_bytes)}};
}

// ", server pid 4242: RSS 20.1 GiB, GPU 1.2 GiB" where known.
std::string watch_server_part(const Event& event) {
  std::string out;
  if (event.pid > 0) {
    out += fmt::format("server pid {}", event.pid);
  }
  if (event.server_rss_bytes) {
    out += fmt::format("{}RSS {}", out.empty() ? "" : ": ", format_bytes(*event.server_rss_bytes));
  }
  if (event.server_gpu_bytes) {
    out += fmt::format("{}GPU {}", out.empty() ? "" : ", ", format_bytes(*event.server_gpu_bytes));
  }
  return out.empty() ? out : " (" + out + ")";
}

std::string watch_event_body(const Event& e) {
  const std::string available = format_bytes(e.available_bytes);
  const std::string threshold = format_bytes(e.threshold_bytes);
  const std::string server = watch_server_part(e);
  const std::string note = e.message.empty() ? "" : ": " + e.message;
  switch (e.kind) {
    case EventKind::low:
      return fmt::format("MemAvailable {} is below --warn {}{}", available, threshold, server);
    case EventKind::recovered:
      return fmt::format("MemAvailable {} is back at {} (--warn plus the hysteresis){}", available,
                         threshold, server);
    case EventKind::floor:
      if (e.check_only) {
        return fmt::format(
            "MemAvailable {} is below --floor {}: llama-server left running (a check: --act "
            "stops it){}{}",
            available, threshold, server, note);
      }
      return fmt::format("MemAvailable {} is below --floor {}: stopping llama-server{}{}",
                         available, threshold, server, note);
    case EventKind::exited:
      return fmt::format("llama-server exited without the watch stopping it{}{}", server, note);
    case EventKind::restart_waiting:
      return fmt::format(
          "restart attempt {} waits for memory: MemAvailable {} is below {} (the floor plus what "
          "the server needs){}",
          e.attempt, available, threshold, note);
    case EventKind::restart:
      return fmt::format("restarting llama-server (attempt {}, after a back-off of {:.0f} s){}",
                         e.attempt, e.delay_s, note);
    case EventKind::gave_up:
      return fmt::format("no more restarts: {} attempt{} in a row failed or did not last{}",
                         e.attempt, e.attempt == 1 ? "" : "s", note);
    case EventKind::watching:
    case EventKind::stopped:
    case EventKind::stop_failed:
    case EventKind::restarted:
    case EventKind::restart_failed:
    case EventKind::ended:
      return e.message;  // the caller's own words, which name the pid where it matters
  }
  return e.message;
}

}  // namespace

std::string render_event_text(const Event& event, const std::string& at) {
  return fmt::format("{}{}: {}\n", at.empty() ? "" : at + " ", event_name(event.kind),
                     watch_event_body(event));
}

json event_to_json(const Event& event, const std::string& at) {
  json doc = render::make_document("watch");
  doc["event"] = event_name(event.kind);
  doc["at"] = at.empty() ? json(nullptr) : json(at);
  doc["t_s"] = event.t_s;
  doc["mem_available_bytes"] = event.sampled ? json(event.available_bytes) : json(nullptr);
  doc["threshold_bytes"] = event.threshold_bytes == 0 ? json(nullptr) : json(event.threshold_bytes);
  doc["pid"] = event.pid > 0 ? json(event.pid) : json(nullptr);
  doc["rss_bytes"] = figure_or_null(event.server_rss_bytes);
  doc["gpu_bytes"] = figure_or_null(event.server_gpu_bytes);
  doc["gpus"] = json::array();
  for (const gpu::GpuReading& gpu : event.gpus) {
    doc["gpus"].push_back(gpu_reading_json(gpu));
  }
  doc["attempt"] = event.attempt;
  doc["delay_s"] = event.delay_s;
  doc["message"] = watch_event_body(event);
  return doc;
}

std::string render_event_json_line(const Event& event, const std::string& at) {
  return event_to_json(event, at).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace gb10tune::watch
