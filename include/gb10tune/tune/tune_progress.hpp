// What `gb10tune tune` says while it runs: the one progress line (redrawn on a terminal), the
// costs once the first candidate is measured, and each candidate's outcome as a plain line.
#pragma once

#include <string>

#include "gb10tune/tune/tune_runner.hpp"

namespace gb10tune::tune {

// "4m12s", "58s", "1h03m".
std::string format_duration(double seconds);

// A candidate's change as "draft_n_max=5".
std::string describe_change(const Candidate& candidate);

// The progress line of `event`: "tune: candidate 3/≈9 draft_n_max=5 · best 23.7 decode t/s
// (draft_n_max=5) · 4m12s elapsed, ETA 6m", or what is being done (the start, the re-measure,
// the restore).
std::string progress_line(const TuneEvent& event, const std::string& metric_label);

// Once the costs are known: "a restart costs 12.3 s and a sample 2.1 s: about 14 more
// candidates fit in the 20m budget".
std::string costs_line(const TuneEvent& event, double budget_s);

// A finished candidate: "candidate 3 draft_n_max=5: better ×1.08 [1.05, 1.11] 95% (restart
// 12.0 s, 12 samples 25.1 s)", or its refusal or failure.
std::string candidate_line(const CandidateResult& result);

// Why a finished tune saved nothing: the start stayed the best, the budget ended before the final
// comparison, or the winner was not better than the original measured next to it.
std::string nothing_saved_line(const TuneResult& result);

}  // namespace gb10tune::tune
