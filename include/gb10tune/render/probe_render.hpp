// Rendering a ProbeResult: the versioned JSON document and the human summary.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/probe/probe.hpp"
#include "gb10tune/render/document.hpp"

namespace gb10tune::render {

// The `probe` document: schema_version, tool, version, command, and every fact and advice
// item as a named field (bytes as integers).
nlohmann::json probe_to_json(const probe::ProbeResult& result);

// The text summary shown on a terminal.
std::string render_probe_text(const probe::ProbeResult& result, const TextStyle& style);

}  // namespace gb10tune::render
