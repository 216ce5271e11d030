// What a tune measured and decided: every configuration's samples, every candidate's verdict
// against the incumbent, and the winner against the starting settings. Computed by the runner,
// kept in the journal, rendered by report/tune_report.
#pragma once

#include <string>
#include <vector>

#include "gb10tune/bench/paired.hpp"
#include "gb10tune/bench/statistics.hpp"
#include "gb10tune/tune/knobs.hpp"
#include "gb10tune/tune/search.hpp"
#include "gb10tune/tune/tune_budget.hpp"

namespace gb10tune::tune {

// One configuration measured on the workload: the goal's figure per request, in workload
// order (0 where the server did not report it), so that two measurements pair by index.
struct Measurement {
  nlohmann::json settings;            // the searched settings (key → value)
  std::vector<std::string> requests;  // the workload requests' names
  std::vector<double> values;         // the goal's figure per request
  bench::SampleStats stats;           // of the values > 0
  bench::MedianInterval interval;     // of the median, 95% where the count allows
};

// Summarizes `values` of `requests` under `settings` (stats and interval of the values > 0).
Measurement make_measurement(nlohmann::json settings, std::vector<std::string> requests,
                             std::vector<double> values);

// A measurement as JSON: settings, requests and values, and for readers its count, median and
// median_interval {low, high, confidence}.
nlohmann::json measurement_to_json(const Measurement& measurement);

// Reads measurement_to_json's object back (settings, requests, values; the statistics are
// recomputed by make_measurement); false with `error` naming the field that is missing or
// mistyped, or when requests and values differ in length.
bool measurement_from_json(const nlohmann::json& doc, Measurement& measurement, std::string& error);

// One candidate and what became of it.
struct CandidateResult {
  Candidate candidate;
  ApplyMode mode = ApplyMode::restart;
  Outcome outcome = Outcome::not_better;
  std::string why;                  // the plan's refusal or the failure; "" otherwise
  Measurement measured;             // empty for does_not_fit / failed before measuring
  bench::PairedComparison against;  // against the incumbent's measurement, same requests
  CandidateCost cost;
};

// A candidate's result as JSON: index, setting, value, settings, incumbent, mode, outcome, why,
// measured (measurement_to_json), against (bench::paired_to_json) and cost.
nlohmann::json candidate_result_to_json(const CandidateResult& result);

// Reads candidate_result_to_json's object back; false with `error` naming the field.
bool candidate_result_from_json(const nlohmann::json& doc, CandidateResult& result,
                                std::string& error);

// Why a tune ended.
enum class StopReason {
  done,          // every knob's walk ended
  budget,        // the next candidate would not have fit in --budget
  interrupted,   // Ctrl-C / SIGTERM
  memory_floor,  // MemAvailable fell below the floor (watch's rule)
  failed,        // the original server could not be measured
};

// "done", "budget", "interrupted", "memory floor", "failed".
std::string_view to_string(StopReason reason);

// A whole tune.
struct TuneResult {
  Goal goal = Goal::decode;
  int concurrency = 1;
  std::string metric_label;  // "decode t/s", "total decode t/s @4", "time to first token ms"
  bool higher_is_better = true;
  std::vector<KnobPlan> knobs;  // what was searched and what was skipped, with why
  Measurement start;            // the starting settings
  std::vector<CandidateResult> candidates;
  Measurement winner;  // the incumbent re-measured at the end
  // The winner's final measurement against the start's (paired): the gain and its confidence.
  bench::PairedComparison gain;
  // The incumbent's re-measure against its own earlier measurement: drift over the tune.
  std::optional<bench::PairedComparison> drift;
  StopReason stopped = StopReason::done;
  double elapsed_s = 0;
  double budget_s = 0;
  Strategy strategy = Strategy::coordinate;  // how the candidates were chosen
};

}  // namespace gb10tune::tune
