// When a case may stop its untimed warm-up runs and start timing (docs/bandwidth-kernels.md,
// "Warm-up until steady"). After allocation and the host work between cases the first runs of
// some cases on an H200 are 8-10% slow; a fixed count either wastes time or stops too early, so
// run_case keeps warming up until the last runs agree, within a bound. Plain C++, host-side, no
// CUDA: the rule is tested without a GPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gb10tune::kernels {

// The steadiness rule. Warm-up stops ("settled") once at least `min_runs` runs were made, the
// last `window` of them lie within `tolerance` of each other (slowest / fastest - 1) and the
// runs after the first took at least `min_seconds` together; it stops anyway ("limit") after
// `max_runs` runs or `max_seconds` of runs after the first, whichever comes first, but never
// before `min_runs`. The first run is left out of both times: it carries one-off costs (the
// migration of managed memory takes ~0.2 s for 1 GiB on an H200).
struct WarmupRule {
  int min_runs = 3;
  int window = 3;             // <= 0: no steadiness test (a fixed count of min_runs)
  double tolerance = 0.01;    // relative spread allowed within the window
  double min_seconds = 0.01;  // GPU time (after the first run) before a window may settle
  int max_runs = 100;
  double max_seconds = 0.2;
};

// The steadiness rule with at least `min_runs` runs (the defaults above otherwise).
WarmupRule steady_warmup_rule(int min_runs);

// Exactly `runs` runs, no steadiness test.
WarmupRule fixed_warmup_rule(int runs);

// Where a warm-up stands after the runs so far.
enum class WarmupState {
  more,     // run another one
  settled,  // the rule is met: start timing
  limit,    // a bound was reached before the rule was met: timing starts anyway
};

// Spread of the last `window` run times, slowest / fastest - 1; nullopt with fewer runs, or when
// a time is not positive.
std::optional<double> last_spread(const std::vector<double>& run_seconds, int window);

// The state after `run_seconds` (the time of every warm-up run so far, in order) under `rule`.
WarmupState warmup_state(const std::vector<double>& run_seconds, const WarmupRule& rule);

// A sentence for a warm-up that ended at a limit, e.g. "the last 3 of 20 untimed runs still
// vary by 2.4% (settled means within 1%)"; "" for one that settled or had a fixed count.
std::string describe_unsettled(const std::vector<double>& run_seconds, const WarmupRule& rule);

}  // namespace gb10tune::kernels
