// Two saved server benchmarks side by side: each metric's medians, the change in %, and
// whether the change is beyond the noise of the two runs; plus which settings differ (K7).
//
// The noise rule: a change is significant when the distribution-free confidence intervals of
// the two medians (median_interval, 95% where the sample count allows) do not overlap and each
// run has at least kMinSamplesForVerdict samples. Identical runs always overlap, so a run
// compared with itself reports no significant difference.
//
// When both runs measured the same requests in the same order (the same request name and
// session in every sample of a level), that level is compared paired instead (bench/paired):
// the verdict is the paired test's, which finds far smaller changes on a workload whose
// requests differ a lot (a multi-turn workload's short and long contexts).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gb10tune/bench/paired.hpp"
#include "gb10tune/bench/run_settings.hpp"
#include "gb10tune/bench/server_result.hpp"
#include "gb10tune/bench/verdict.hpp"

namespace gb10tune::bench {

// The fewest samples per run for a verdict of better or worse. With 5 samples the median's
// interval is [min, max] at 93.75% confidence, and two runs of the same server separate
// completely by chance with probability 2 / C(10, 5) < 1%; with 3 samples it would be 10%
// (and the intervals only 75% sure), with 2 samples 33%.
inline constexpr int kMinSamplesForVerdict = 5;

// One row of the comparison.
struct MetricComparison {
  std::string label;  // "decode", "per-session decode @2", "total decode @2"
  std::string unit;
  bool higher_is_better = true;
  MetricSummary a;
  MetricSummary b;
  double change_percent = 0;  // (b − a) / a × 100 of the medians; 0 when a's median is 0
  Verdict verdict = Verdict::not_comparable;  // the paired test's when `paired` is set
  // The paired comparison, when the level's requests pair (same requests, same order).
  std::optional<PairedComparison> paired;
};

struct Comparison {
  std::string a_name;
  std::string b_name;
  std::vector<MetricComparison> rows;
  std::vector<SettingDifference> settings;  // what differs (see setting_differences)
  bool any_significant = false;
  // Set when the runs differ in more than one setting: the change cannot be attributed (K7).
  std::string warning;
  std::vector<int> skipped_levels;  // concurrency levels only one run has
  // The requests of the headline level paired between the runs; 0 when they do not pair.
  int paired_requests = 0;
};

// Compares run `a` (the baseline) with run `b`: the headline (first) level's metrics, then
// the per-session and total decode rates of every other concurrency level both runs have;
// paired where a level's requests pair.
Comparison compare_results(const ServerBenchResult& a, const ServerBenchResult& b,
                           const std::string& a_name, const std::string& b_name);

// The verdict for two summaries under the noise rule.
Verdict judge(const MetricSummary& a, const MetricSummary& b, bool higher_is_better);

}  // namespace gb10tune::bench
