#include "gb10tune/bench/compare.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gb10tune::bench {

namespace {

MetricComparison make_row(std::string label, std::string_view unit, bool higher_is_better,
                          MetricSummary a, MetricSummary b) {
  MetricComparison row;
  row.label = std::move(label);
  row.unit = std::string(unit);
  row.higher_is_better = higher_is_better;
  row.verdict = judge(a, b, higher_is_better);
  if (a.stats.count > 0 && b.stats.count > 0 && a.stats.median != 0) {
    row.change_percent = (b.stats.median - a.stats.median) / a.stats.median * 100.0;
  }
  row.a = std::move(a);
  row.b = std::move(b);
  return row;
}

// The level of `result` at `concurrency`, headline level excluded.
const LevelResult* find_level(const ServerBenchResult& result, int concurrency) {
  for (std::size_t i = 1; i < result.levels.size(); ++i) {
    const LevelResult& level = result.levels[i];
    if (level.concurrency == concurrency) {
      return &level;
    }
  }
  return nullptr;
}

}  // namespace

Verdict judge(const MetricSummary& a, const MetricSummary& b, bool higher_is_better) {
  if (a.stats.count == 0 || b.stats.count == 0) {
    return Verdict::not_comparable;
  }
  const bool b_above = b.interval.low > a.interval.high;
  const bool b_below = b.interval.high < a.interval.low;
  if (!b_above && !b_below) {
    return Verdict::no_significant_difference;
  }
  if (a.stats.count < kMinSamplesForVerdict || b.stats.count < kMinSamplesForVerdict) {
    return Verdict::too_few_samples;  // apart, but too few samples to call it a change
  }
  return b_above == higher_is_better ? Verdict::better : Verdict::worse;
}

Comparison compare_results(const ServerBenchResult& a, const ServerBenchResult& b,
                           const std::string& a_name, const std::string& b_name) {
  Comparison out;
  out.a_name = a_name;
  out.b_name = b_name;
  if (!a.levels.empty() && !b.levels.empty()) {
    const LevelSummary sa = summarize_level(a.levels.front());
    const LevelSummary sb = summarize_level(b.levels.front());
    const std::string suffix = sa.concurrency == sb.concurrency && sa.concurrency == 1
                                   ? std::string()
                                   : fmt::format(" @{}/{}", sa.concurrency, sb.concurrency);
    for (Metric metric : kMetrics) {
      const MetricInfo info = metric_info(metric);
      const MetricSummary& ma = metric_of(sa, metric);
      const MetricSummary& mb = metric_of(sb, metric);
      if (ma.stats.count == 0 && mb.stats.count == 0) {
        continue;  // neither run has it (no speculation in either)
      }
      out.rows.push_back(
          make_row(std::string(info.label) + suffix, info.unit, info.higher_is_better, ma, mb));
    }
  }
  // Every further level of `a` that `b` also has: per-session and total decode (K10).
  for (std::size_t i = 1; i < a.levels.size(); ++i) {
    const int concurrency = a.levels[i].concurrency;
    const LevelResult* other = find_level(b, concurrency);
    if (other == nullptr) {
      out.skipped_levels.push_back(concurrency);
      continue;
    }
    const LevelSummary sa = summarize_level(a.levels[i]);
    const LevelSummary sb = summarize_level(*other);
    out.rows.push_back(make_row(fmt::format("per-session decode @{}", concurrency), "t/s", true,
                                sa.per_session_decode, sb.per_session_decode));
    out.rows.push_back(make_row(fmt::format("total decode @{}", concurrency), "t/s", true,
                                sa.total_decode, sb.total_decode));
  }
  for (std::size_t i = 1; i < b.levels.size(); ++i) {
    const int concurrency = b.levels[i].concurrency;
    const bool compared = find_level(a, concurrency) != nullptr;
    const bool listed = std::find(out.skipped_levels.begin(), out.skipped_levels.end(),
                                  concurrency) != out.skipped_levels.end();
    if (!compared && !listed) {
      out.skipped_levels.push_back(concurrency);
    }
  }
  out.any_significant = std::any_of(out.rows.begin(), out.rows.end(), [](const auto& row) {
    return row.verdict == Verdict::better || row.verdict == Verdict::worse;
  });
  out.settings = setting_differences(a.provenance.settings, b.provenance.settings);
  if (out.settings.size() > 1) {
    std::string keys;
    for (const SettingDifference& d : out.settings) {
      keys += (keys.empty() ? "" : ", ") + d.key;
    }
    out.warning = fmt::format(
        "the runs differ in {} settings ({}): a difference cannot be attributed to one of "
        "them; change one setting at a time (K7)",
        out.settings.size(), keys);
  }
  return out;
}

}  // namespace gb10tune::bench
