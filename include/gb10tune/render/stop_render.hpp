// What `gb10tune stop` prints: the servers it stopped (or why not), as text or a JSON document.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/launch/stop_servers.hpp"

namespace gb10tune::render {

// The text: the stale pid file removed, the processes listed (--all), each stop's result, the
// RPC workers left running.
std::string render_stop_text(const launch::StopOutcome& outcome);

// The --json document (make_document("stop") plus the pid file, the processes, the workers left
// running; a failure when a process could not be stopped).
nlohmann::json stop_to_json(const launch::StopOutcome& outcome);

}  // namespace gb10tune::render
