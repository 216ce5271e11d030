#include "gb10tune/bench/compare.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/bench/run_noise.hpp"

namespace gb10tune::bench {

namespace {

MetricComparison make_row(std::string label, std::string_view unit, bool higher_is_better,
                          MetricSummary a, MetricSummary b,
                          std::optional<PairedComparison> paired = std::nullopt) {
  MetricComparison row;
  row.label = std::move(label);
  row.unit = std::string(unit);
  row.higher_is_better = higher_is_better;
  row.verdict = paired ? paired->verdict : judge(a, b, higher_is_better);
  row.paired = std::move(paired);
  if (a.stats.count > 0 && b.stats.count > 0 && a.stats.median != 0) {
    row.change_percent = (b.stats.median - a.stats.median) / a.stats.median * 100.0;
  }
  row.a = std::move(a);
  row.b = std::move(b);
  return row;
}

// Whether two levels measured the same requests in the same order: the same concurrency and,
// sample by sample, the same request and session.
bool requests_pair(const LevelResult& a, const LevelResult& b) {
  if (a.concurrency != b.concurrency || a.samples.empty() || a.samples.size() != b.samples.size() ||
      a.round_totals.size() != b.round_totals.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.samples.size(); ++i) {
    if (a.samples[i].request != b.samples[i].request ||
        a.samples[i].session != b.samples[i].session) {
      return false;
    }
  }
  return true;
}

// `metric` of every sample of `level`, 0 where the server did not report it (so that two
// levels' values pair by index; compare_paired leaves such pairs out).
std::vector<double> sample_values(const LevelResult& level, Metric metric) {
  std::vector<double> values;
  values.reserve(level.samples.size());
  for (const RequestSample& sample : level.samples) {
    values.push_back(metric_value(metric, sample.timings).value_or(0));
  }
  return values;
}

// Two saved runs, each measured once: the pairs cancel what the requests differ in, but not a
// whole run's level (a server measured seconds apart moved 4-8% between identical runs on an
// H200, docs/server-bench.md). The interval counts a run-to-run noise of kRunNoiseFloorSd per
// run, or the wander of the ratios within the runs where that is larger.
constexpr double kRunNoiseFloorSd = 0.03;

PairedComparison compare_runs(const std::vector<double>& a, const std::vector<double>& b,
                              bool higher_is_better) {
  const double level_var =
      std::max(2 * kRunNoiseFloorSd * kRunNoiseFloorSd, 2 * block_wander_variance(a, b));
  return compare_paired(a, b, higher_is_better, 0.95, level_var);
}

// The paired comparison of `metric` over two levels, when their requests pair.
std::optional<PairedComparison> paired_metric(const LevelResult& a, const LevelResult& b,
                                              Metric metric, bool higher_is_better) {
  if (!requests_pair(a, b)) {
    return std::nullopt;
  }
  return compare_runs(sample_values(a, metric), sample_values(b, metric), higher_is_better);
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
      out.rows.push_back(make_row(
          std::string(info.label) + suffix, info.unit, info.higher_is_better, ma, mb,
          paired_metric(a.levels.front(), b.levels.front(), metric, info.higher_is_better)));
    }
    if (requests_pair(a.levels.front(), b.levels.front())) {
      out.paired_requests = static_cast<int>(a.levels.front().samples.size());
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
    const bool paired = requests_pair(a.levels[i], *other);
    out.rows.push_back(make_row(fmt::format("per-session decode @{}", concurrency), "t/s", true,
                                sa.per_session_decode, sb.per_session_decode,
                                paired_metric(a.levels[i], *other, Metric::decode_tps, true)));
    out.rows.push_back(make_row(
        fmt::format("total decode @{}", concurrency), "t/s", true, sa.total_decode, sb.total_decode,
        paired ? std::optional(compare_runs(a.levels[i].round_totals, other->round_totals, true))
               : std::nullopt));
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
