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
  double at_s = 0;                    // when it was taken: its middle, seconds into the tune
};

// Summarizes `values` of `requests` under `settings` (stats and interval of the values > 0).
Measurement make_measurement(nlohmann::json settings, std::vector<std::string> requests,
                             std::vector<double> values);

// A measurement as JSON: settings, requests, values and at_s, and for readers its count, median
// and median_interval {low, high, confidence}.
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
  std::string why;  // the plan's refusal or the failure; "" otherwise
  // Every round of the candidate, one after the other (empty for does_not_fit / failed before
  // measuring); a comparison that needed more evidence has two rounds or more.
  Measurement measured;
  // Against the incumbent measured around it (interpolated in time to each round), same requests.
  bench::PairedComparison against;
  CandidateCost cost;
  int rounds = 0;  // rounds of the candidate measured
  // The incumbent measured again after the candidate (its last round): the reference's second
  // end, and the next candidate's first; absent when the candidate was worse beyond the noise
  // against the incumbent's earlier run alone.
  std::optional<Measurement> after;
  // The incumbent's run after the candidate against its run before: the drift it spanned.
  std::optional<bench::PairedComparison> drift;
};

// Whether `against` is undecided but favours the candidate by kSmallestGain or more.
bool promising(const bench::PairedComparison& against, bool higher_is_better);

// What `result` means for a search: its outcome; promising when it is not better beyond the
// noise but its estimate favours it by kSmallestGain or more; worse beyond the noise.
Decision decision_of(const CandidateResult& result, bool higher_is_better);

// A candidate's result as JSON: index, pass, setting, value, settings, incumbent, mode, outcome,
// why, measured (measurement_to_json), against (bench::paired_to_json), cost, rounds, and the
// incumbent's after and drift when measured.
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
  // The winner's last measurement: the incumbent's run after the last candidate, or measured
  // again at the end.
  Measurement winner;
  // The original server measured again at the end, right after the winner (when the winner is
  // not the start and the tune ended done or on the budget).
  std::optional<Measurement> start_again;
  // The final comparison, which alone decides what is saved: the winner's last run against the
  // start's run next to it in time (start_again), or against the start's first run when there
  // is none; the run-to-run noise counted.
  bench::PairedComparison gain;
  // The start measured again at the end against its first run: the drift over the whole tune.
  std::optional<bench::PairedComparison> drift;
  double run_noise_sd = 0;  // the run-to-run noise the tune estimated (log scale)
  StopReason stopped = StopReason::done;
  double elapsed_s = 0;
  double budget_s = 0;
  Strategy strategy = Strategy::coordinate;  // how the candidates were chosen
};

// Whether the winner is the start's settings (nothing was kept).
bool winner_is_start(const TuneResult& result);

// Whether the tune found something worth saving: it ended done or on the budget, the winner is
// not the start, and the final comparison says it is better beyond the noise.
bool worth_saving(const TuneResult& result);

}  // namespace gb10tune::tune
