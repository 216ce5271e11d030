// A tune's result for people and for programs: the table of every candidate (knob, value,
// median, interval with its confidence, the paired verdict against the incumbent, its cost), the
// winner and its gain over the start with its confidence, a terminal chart of the main sweep
// (the goal's figure against the most-walked knob, with intervals), and the JSON document.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gb10tune/tune/tune_result.hpp"

namespace gb10tune::render {

// One value of the knob a tune walked most: the value, its measurement (nullptr: not measured,
// `outcome` says why) and what became of it ("" for the value the walk began from).
struct SweepRow {
  nlohmann::json value;
  const tune::Measurement* measured = nullptr;
  std::string outcome;
};

// The knob walked most (the most candidates; the first in the search's order on a tie) in
// `setting`, and its rows sorted by value: the value it had when its walk began with the
// incumbent's measurement then, and each of its candidates. Empty when no knob had a candidate.
// The rows point into `result`.
std::vector<SweepRow> tune_sweep_rows(const tune::TuneResult& result, std::string& setting);

// The text report (plain lines, no color), `width` columns for the chart.
std::string render_tune(const tune::TuneResult& result, int width = 80);

// The chart alone: one row per value of the knob walked most, its median as a bar and its
// interval as [—]; "" when no knob had two or more measured values.
std::string render_tune_chart(const tune::TuneResult& result, int width = 80);

// The --json document's body (numbers as numbers).
nlohmann::json tune_to_json(const tune::TuneResult& result);

}  // namespace gb10tune::render
