// How `gb10tune watch` prints its events: one text line each, or one JSON object per line
// (JSON Lines, for journald and log shippers).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/watch/watch_policy.hpp"

namespace gb10tune::watch {

// "2026-12-01T11:02:03Z low: MemAvailable 9.8 GiB is below --warn 12.0 GiB (server pid 4242,
// RSS 20.1 GiB)" and a newline; `at` is the wall-clock time (may be empty). The GPU sensors
// are left out, so that the line stays short (the JSON line carries them).
std::string render_event_text(const Event& event, const std::string& at);

// The event as one JSON object: the shared envelope (schema_version, tool, version,
// command "watch") plus event, at, t_s, mem_available_bytes and the event's own fields; null
// for figures not known; `gpus` lists the sample's GPU sensors (empty without a sample or NVML).
nlohmann::json event_to_json(const Event& event, const std::string& at);

// event_to_json on one line, with a newline.
std::string render_event_json_line(const Event& event, const std::string& at);

}  // namespace gb10tune::watch
