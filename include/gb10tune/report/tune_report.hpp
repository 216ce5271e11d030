// A tune's result for people and for programs: the table of every candidate (knob, value,
// median, interval with its confidence, the paired verdict against the incumbent, its cost), the
// winner and its gain over the start with its confidence, a terminal chart of the main sweep
// (the goal's figure against the most-walked knob, with intervals), and the JSON document.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/tune/tune_result.hpp"

namespace gb10tune::report {

// The text report (plain lines, no color), `width` columns for the chart.
std::string render_tune(const tune::TuneResult& result, int width = 80);

// The chart alone: one row per value of the knob walked most, its median as a bar and its
// interval as [—]; "" when no knob had two or more measured values.
std::string render_tune_chart(const tune::TuneResult& result, int width = 80);

// The --json document's body (numbers as numbers).
nlohmann::json tune_to_json(const tune::TuneResult& result);

}  // namespace gb10tune::report
