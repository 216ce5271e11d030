// Paired comparison of two server configurations measured on the same requests (K7, the tuner's
// test): the per-request ratio b / a removes what the requests differ in (context length, reply
// length), which dominates an unpaired comparison of medians on a multi-turn workload.
//
// The figure is the geometric mean of the ratios, exp(mean(ln(b_i / a_i))), with a Student-t
// interval of the mean log ratio; the verdict is "better"/"worse" when that interval excludes 1
// (in the metric's good direction) and there are at least kMinPairsForVerdict pairs.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "gb10tune/bench/verdict.hpp"

namespace gb10tune::bench {

// The fewest pairs for a verdict: below it the t quantile is so wide (n = 2: 12.7) that an
// interval says little, and one odd request decides.
inline constexpr int kMinPairsForVerdict = 3;

// One paired comparison of a metric.
struct PairedComparison {
  int pairs = 0;         // pairs with both values > 0
  double ratio = 1;      // geometric mean of b_i / a_i
  double ratio_low = 1;  // the interval of the ratio at `confidence`
  double ratio_high = 1;
  double confidence = 0.95;  // as asked
  double log_ratio_sd = 0;   // sample standard deviation of ln(b_i / a_i): the pairs' noise
  double level_sd = 0;       // sqrt of the run-level variance counted into the interval
  Verdict verdict = Verdict::not_comparable;  // better/worse/no_significant_difference/too_few
  // Pairs a difference of 3% needs at this noise to be found 80% of the time at `confidence`
  // (pairs_needed); nullopt below 2 pairs (no noise figure yet).
  std::optional<int> pairs_for_3_percent;
};

// Compares `b` with the baseline `a`, pair i being a[i] and b[i] (the same request under both);
// the spans must have equal sizes (else not_comparable). Pairs where either value is not > 0
// are left out. `higher_is_better` gives the good direction.
//
// `level_var` is the variance (log scale) of the difference between the two runs' whole levels
// that the pairs cannot show: a server that drifts or jitters from one run to the next moves
// every pair of a run together, so the pairs' own spread under-states the noise (bench/run_noise
// estimates it). The interval's half-width is t · sqrt(sd² / n + level_var).
PairedComparison compare_paired(std::span<const double> a, std::span<const double> b,
                                bool higher_is_better, double confidence = 0.95,
                                double level_var = 0);

// Pairs needed to detect a relative difference `relative_difference` (0.03 for 3%) with
// probability `power` at `confidence` (two-sided), when ln-ratios have standard deviation
// `log_ratio_sd`: the normal-approximation formula ((z_a + z_b) · sd / ln(1 + d))², rounded up,
// at least kMinPairsForVerdict. sd 0 gives kMinPairsForVerdict.
int pairs_needed(double log_ratio_sd, double relative_difference, double confidence = 0.95,
                 double power = 0.8);

// The two-sided Student t quantile t_{(1+confidence)/2, dof} (dof >= 1, 0 < confidence < 1),
// from the t distribution's CDF (the regularized incomplete beta function) inverted by bisection:
// exact to ~1e-12 for any dof. Outside that domain: std::invalid_argument (a caller's bug).
double student_t_quantile(double confidence, int dof);

// The comparison as JSON: pairs, ratio, ratio_low, ratio_high, confidence, log_ratio_sd,
// verdict (to_string) and pairs_for_3_percent (null when unknown).
nlohmann::json paired_to_json(const PairedComparison& paired);

// Reads paired_to_json's object back; false with `error` naming the field when one is missing or
// mistyped.
bool paired_from_json(const nlohmann::json& doc, PairedComparison& paired, std::string& error);

}  // namespace gb10tune::bench
