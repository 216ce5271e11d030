#include "gb10tune/render/bench_server_render.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::render {

using bench::Metric;
using nlohmann::json;

namespace {

int decimals(Metric metric) {
  switch (metric) {
    case Metric::acceptance_rate:
      return 3;
    case Metric::mean_accepted_length:
      return 2;
    default:
      return 1;
  }
}

std::string fixed(double value, int places) {
  return fmt::format("{:.{}f}", value, places);
}

std::string label_with_unit(std::string_view label, std::string_view unit) {
  return unit.empty() ? std::string(label) : fmt::format("{} ({})", label, unit);
}

// The confidence an interval really has: "93.75%", "75%", "96.09%".
std::string confidence_text(const bench::MedianInterval& interval) {
  return fmt::format("{:.4g}%", interval.confidence * 100);
}

std::string metric_row(const bench::MetricSummary& summary, std::string_view label,
                       std::string_view unit, int places) {
  const bench::SampleStats& s = summary.stats;
  if (s.count == 0) {
    return fmt::format("  {:<30} {:>9}\n", label_with_unit(label, unit), "n/a");
  }
  const std::string interval = fmt::format("[{}, {}]", fixed(summary.interval.low, places),
                                           fixed(summary.interval.high, places));
  return fmt::format("  {:<30} {:>9}  {:<20} {:>7} {:>9} {:>9} {:>6.1f}% {:>4}\n",
                     label_with_unit(label, unit), fixed(s.median, places), interval,
                     confidence_text(summary.interval), fixed(s.min, places), fixed(s.max, places),
                     s.cv * 100, s.count);
}

std::string slots_line(const bench::Provenance& p) {
  std::string spec = "speculative decoding not reported";
  if (p.speculative && !*p.speculative) {
    spec = "speculative decoding off";
  } else if (p.speculative) {
    spec = fmt::format("speculative decoding {}{}",
                       p.spec_type.empty() ? std::string("on") : p.spec_type,
                       p.draft_n_max ? fmt::format(", n-max {}", *p.draft_n_max) : "");
  }
  if (!p.spec_source.empty()) {
    spec += fmt::format(" ({})", p.spec_source);
  }
  std::string topology;
  if (!p.rpc_workers.empty()) {
    topology = fmt::format(", RPC workers {} ({})", p.rpc_workers, p.rpc_source);
  }
  return fmt::format("{} slot{} × {} tokens of context, {}{}", p.total_slots,
                     p.total_slots == 1 ? "" : "s", p.n_ctx_per_slot, spec, topology);
}

std::string roofline_text(const bench::Roofline& roof) {
  if (!roof.available) {
    return fmt::format("roofline (K12): not computed: {}\n", roof.missing);
  }
  std::string out =
      fmt::format("roofline (K12): {} read per token ({}) at {:.1f} GB/s ({}) → {:.3g} ms per step",
                  format_bytes_si(roof.inputs.bytes_per_token), roof.inputs.bytes_source,
                  roof.inputs.bandwidth_bytes_per_second / 1e9, roof.inputs.bandwidth_source,
                  roof.step_seconds * 1e3);
  if (roof.mean_accepted_length != 1.0) {
    out += fmt::format(" × {:.2f} tokens per step", roof.mean_accepted_length);
  }
  out += fmt::format(" → ceiling {:.1f} t/s; measured {:.1f} t/s = {:.3g}% of it\n",
                     roof.ceiling_tps, roof.measured_tps, roof.percent_of_ceiling);
  const bench::DepthRoofline& d = roof.at_depth;
  if (d.available) {
    out += fmt::format(
        "  at the requests' median depth of {} tokens the caches add {} a step → ceiling {:.1f} "
        "t/s; measured = {:.3g}% of it",
        d.depth, format_bytes_si(d.cache_bytes), d.ceiling_tps, d.percent_of_ceiling);
    if (!d.expect_kind.empty()) {
      out += fmt::format(
          "; published GB10 runs of {} models reached {:.1f}–{:.1f} t/s there (an expectation, "
          "docs/plan.md)",
          d.expect_kind, d.expect_low_tps, d.expect_high_tps);
    }
    out += '\n';
  }
  return out;
}

json summary_json(const bench::MetricSummary& summary) {
  return {{"count", summary.stats.count},
          {"median", summary.stats.median},
          {"min", summary.stats.min},
          {"max", summary.stats.max},
          {"cv", summary.stats.cv},
          {"mad", summary.mad},
          {"median_interval",
           {{"low", summary.interval.low},
            {"high", summary.interval.high},
            {"confidence", summary.interval.confidence}}}};
}

std::string unpaired_rule_text() {
  return fmt::format(
      "medians [distribution-free interval] and the interval's confidence (95% needs 6 "
      "samples,\n93.75% at 5, 75% at 3); a change is beyond the noise when the intervals do "
      "not overlap\nand each run has at least {} samples\n",
      bench::kMinSamplesForVerdict);
}

std::string paired_rule_text(const bench::Comparison& c) {
  std::string out =
      c.paired_requests > 0
          ? fmt::format(
                "paired over {} requests: both runs measured the same requests in the "
                "same order;\n",
                c.paired_requests)
          : "paired where both runs measured the same requests in the same order (rows with "
            "B/A);\n";
  out += fmt::format(
      "B/A is the geometric mean of the per-request ratios with its Student-t interval at 95%,\n"
      "and a change is beyond the noise when that interval excludes 1 (at least {} pairs); the\n"
      "medians [distribution-free interval] and their confidence are shown for reference\n",
      bench::kMinPairsForVerdict);
  const bool all_paired = std::all_of(c.rows.begin(), c.rows.end(),
                                      [](const auto& row) { return row.paired.has_value(); });
  if (!all_paired) {
    out += fmt::format(
        "rows without B/A did not pair (other requests or order): a change there is beyond\n"
        "the noise when the medians' intervals do not overlap and each run has at least {}\n"
        "samples\n",
        bench::kMinSamplesForVerdict);
  }
  return out;
}

std::string paired_cell(const bench::PairedComparison& p) {
  if (p.pairs == 0) {
    return "n/a";
  }
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", p.ratio, p.ratio_low, p.ratio_high);
}

// What the decode row's pairs say about the noise: how many pairs a 3% change needs.
std::string noise_line(const bench::Comparison& c) {
  for (const bench::MetricComparison& row : c.rows) {
    if (row.label != "decode" || !row.paired || !row.paired->pairs_for_3_percent) {
      continue;
    }
    const bench::PairedComparison& p = *row.paired;
    return fmt::format(
        "noise: decode's per-request ratios vary by {:.1f}% (sd of their log); a 3% change needs "
        "{} pairs\nto be found 80% of the time at 95% (this comparison has {})\n",
        p.log_ratio_sd * 100, *p.pairs_for_3_percent, p.pairs);
  }
  return "";
}

}  // namespace

std::string format_metric(Metric metric, double value) {
  return fixed(value, decimals(metric));
}

std::string render_server_bench_text(const bench::ServerBenchResult& r, const TextStyle& style) {
  const bench::Provenance& p = r.provenance;
  std::string out = style.bold(fmt::format("gb10tune bench server — {}", p.url)) + "\n";
  out += fmt::format("  model     {}\n", p.model_path.empty() ? "(not reported)" : p.model_path);
  out += fmt::format("  build     {}\n", p.build_info.empty() ? "(not reported)" : p.build_info);
  out += fmt::format("  server    {}\n", slots_line(p));
  out += fmt::format("  workload  {}: {} requests in {} conversations\n", r.workload_source,
                     r.workload_requests, r.workload_conversations);
  out += fmt::format("  date      {} (gb10tune {})\n\n", p.date, p.tool_version);
  if (r.levels.empty()) {
    return out + "no measurements\n";
  }

  const bench::LevelSummary head = bench::summarize_level(r.levels.front());
  out += fmt::format(
      "{} request{} after {} warm-up round{}{}; figures as the server reported them "
      "(timings);\ninterval: distribution-free interval of the median, at the confidence "
      "in column conf\n(95% needs 6 samples: [min, max] of n samples covers 1 − 2·0.5^n, "
      "75% at n = 3)\n",
      r.levels.front().samples.size(), r.levels.front().samples.size() == 1 ? "" : "s",
      r.options.warmup, r.options.warmup == 1 ? "" : "s",
      head.concurrency == 1 ? std::string() : fmt::format(" at concurrency {}", head.concurrency));
  out += style.dim(fmt::format("  {:<30} {:>9}  {:<20} {:>7} {:>9} {:>9} {:>7} {:>4}", "metric",
                               "median", "interval", "conf", "min", "max", "CV", "n")) +
         "\n";
  for (const bench::MetricSummary& summary : head.metrics) {
    const bench::MetricInfo info = bench::metric_info(summary.metric);
    out += metric_row(summary, info.label, info.unit, decimals(summary.metric));
  }
  out += "  (time to first token = the server's prompt_ms: without streaming, the prefill time)\n";

  if (r.levels.size() > 1 || head.concurrency != 1) {
    out +=
        "\nconcurrency (K10): per-session = median of each request's own decode rate; total "
        "=\nmedian over rounds of the sum of the sessions' rates; client-timed = generated "
        "tokens /\nwall time of the level, measured by gb10tune (includes HTTP and prefill)\n";
    out += style.dim(fmt::format("  {:>8} {:>16} {:>24} {:>14}", "sessions", "per-session t/s",
                                 "total t/s [interval]", "client-timed")) +
           "\n";
    for (const bench::LevelResult& level : r.levels) {
      const bench::LevelSummary s = bench::summarize_level(level);
      const std::string total =
          fmt::format("{:.1f} [{:.1f}, {:.1f}]", s.total_decode.stats.median,
                      s.total_decode.interval.low, s.total_decode.interval.high);
      out += fmt::format("  {:>8} {:>16.1f} {:>24} {:>14.1f}\n", s.concurrency,
                         s.per_session_decode.stats.median, total, s.client_tokens_per_second);
    }
  }
  out += "\n" + roofline_text(r.roofline);
  return out;
}

std::string render_round_progress(int concurrency, int round, int rounds, bool warmup,
                                  const std::vector<bench::RequestSample>& samples) {
  const int width = static_cast<int>(std::to_string(rounds).size());
  std::string out = fmt::format("[c={} {:>{}}/{}]{}", concurrency, round, width, rounds,
                                warmup ? " warm-up" : "");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const bench::RequestSample& s = samples[i];
    out += fmt::format("{} {}: prefill {:.1f} t/s ({} tokens), decode {:.1f} t/s ({} tokens)",
                       i == 0 ? "" : ";", s.request, s.timings.prompt_per_second,
                       static_cast<long long>(s.timings.prompt_n), s.timings.predicted_per_second,
                       static_cast<long long>(s.timings.predicted_n));
    if (const auto rate = bench::metric_value(Metric::acceptance_rate, s.timings)) {
      out += fmt::format(", acceptance {:.2f}", *rate);
    }
  }
  return out;
}

std::string render_comparison_text(const bench::Comparison& c, const TextStyle& style) {
  std::string out =
      style.bold(fmt::format("gb10tune bench compare — A: {}  B: {}", c.a_name, c.b_name)) + "\n";
  const bool any_paired = std::any_of(c.rows.begin(), c.rows.end(),
                                      [](const auto& row) { return row.paired.has_value(); });
  out += any_paired ? paired_rule_text(c) : unpaired_rule_text();
  const std::string paired_head = any_paired ? fmt::format(" {:>24}", "B/A paired") : "";
  out += style.dim(fmt::format("  {:<31} {:>34} {:>34} {:>8}{}  {}", "metric", "A", "B", "change",
                               paired_head, "verdict")) +
         "\n";
  for (const bench::MetricComparison& row : c.rows) {
    const int places = row.unit == "t/s" || row.unit == "ms" ? 1 : (row.unit.empty() ? 3 : 2);
    const auto cell = [&](const bench::MetricSummary& s) {
      if (s.stats.count == 0) {
        return std::string("n/a");
      }
      return fmt::format("{} [{}, {}] {}", fixed(s.stats.median, places),
                         fixed(s.interval.low, places), fixed(s.interval.high, places),
                         confidence_text(s.interval));
    };
    const bool both = row.a.stats.count > 0 && row.b.stats.count > 0;
    const std::string change = both ? fmt::format("{:+.1f}%", row.change_percent) : "";
    std::string verdict(bench::to_string(row.verdict));
    if (row.verdict == bench::Verdict::better) {
      verdict = style.green(verdict);
    } else if (row.verdict == bench::Verdict::worse) {
      verdict = style.red(verdict);
    }
    const std::string paired =
        any_paired ? fmt::format(" {:>24}", row.paired ? paired_cell(*row.paired) : "") : "";
    out += fmt::format("  {:<31} {:>34} {:>34} {:>8}{}  {}\n", label_with_unit(row.label, row.unit),
                       cell(row.a), cell(row.b), change, paired, verdict);
  }
  for (int level : c.skipped_levels) {
    out += fmt::format("  (concurrency {} ran in only one of the runs: not compared)\n", level);
  }
  out += "\n";
  out += noise_line(c);
  out += c.any_significant ? "result: a difference beyond the noise (see the verdicts above)\n"
                           : "result: no significant difference\n";
  if (c.settings.empty()) {
    out += "settings: the same in both runs\n";
  } else {
    out += c.settings.size() == 1 ? "settings: one differs\n"
                                  : fmt::format("settings: {} differ\n", c.settings.size());
    for (const bench::SettingDifference& d : c.settings) {
      out += fmt::format("  {}: {} → {}\n", d.key, d.a.empty() ? "(unset)" : d.a,
                         d.b.empty() ? "(unset)" : d.b);
    }
  }
  if (!c.warning.empty()) {
    out += style.yellow("warning: " + c.warning) + "\n";
  }
  return out;
}

json comparison_to_json(const bench::Comparison& c) {
  json doc = make_document("bench compare");
  doc["a"] = c.a_name;
  doc["b"] = c.b_name;
  doc["noise_rule"] = fmt::format(
      "significant when the distribution-free confidence intervals of the two "
      "medians (95% where the sample count allows; each row's median_interval has "
      "its confidence) do not overlap and each run has at least {} samples",
      bench::kMinSamplesForVerdict);
  if (c.paired_requests > 0) {
    doc["paired_requests"] = c.paired_requests;
    doc["paired_rule"] = fmt::format(
        "rows with \"paired\" (both runs measured the same requests in the same order): "
        "significant when the Student-t interval of the geometric mean of the per-request ratios "
        "b/a excludes 1 and there are at least {} pairs; their verdict is the paired one",
        bench::kMinPairsForVerdict);
  }
  json rows = json::array();
  for (const bench::MetricComparison& row : c.rows) {
    json entry = {{"metric", row.label},
                  {"unit", row.unit},
                  {"higher_is_better", row.higher_is_better},
                  {"a", summary_json(row.a)},
                  {"b", summary_json(row.b)},
                  {"change_percent", row.change_percent},
                  {"verdict", bench::to_string(row.verdict)}};
    if (row.paired) {
      entry["paired"] = bench::paired_to_json(*row.paired);
    }
    rows.push_back(std::move(entry));
  }
  doc["metrics"] = rows;
  doc["skipped_concurrency_levels"] = c.skipped_levels;
  doc["significant"] = c.any_significant;
  json settings = json::array();
  for (const bench::SettingDifference& d : c.settings) {
    settings.push_back({{"key", d.key}, {"a", d.a}, {"b", d.b}});
  }
  doc["setting_differences"] = settings;
  doc["warning"] = c.warning;
  return doc;
}

}  // namespace gb10tune::render
