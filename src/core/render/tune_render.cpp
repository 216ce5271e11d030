#include "gb10tune/render/tune_render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gb10tune::render {

namespace {

using nlohmann::json;
using tune::CandidateResult;
using tune::Measurement;
using tune::TuneResult;

// A setting's value as the report shows it: "on", "5", "0.75".
std::string value_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// "42 s", "14m 03s", "1h 05m".
std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s < 60) {
    return fmt::format("{} s", s);
  }
  if (s < 3600) {
    return fmt::format("{}m {:02}s", s / 60, s % 60);
  }
  return fmt::format("{}h {:02}m", s / 3600, s % 3600 / 60);
}

std::string ratio_text(const bench::PairedComparison& p) {
  return fmt::format("{:.3f}× [{:.3f}, {:.3f}]", p.ratio, p.ratio_low, p.ratio_high);
}

std::string median_cells(const Measurement& m) {
  if (m.stats.count == 0) {
    return fmt::format("{:>8}  {:<16} {:>6}", "—", "", "");
  }
  return fmt::format("{:>8.1f}  {:<16} {:>6}", m.stats.median,
                     fmt::format("[{:.1f}, {:.1f}]", m.interval.low, m.interval.high),
                     fmt::format("{:.4g}%", m.interval.confidence * 100));
}

std::string table_row(std::string_view number, std::string_view knob, std::string_view value,
                      std::string_view applied, std::string_view cells, std::string_view against,
                      std::string_view verdict, std::string_view cost) {
  std::string row = fmt::format("  {:>3}  {:<13} {:>6}  {:<11} {}  {:<22}  {:<12} {:>6}", number,
                                knob, value, applied, cells, against, verdict, cost);
  row.erase(row.find_last_not_of(' ') + 1);
  return row + "\n";
}

std::string candidate_row(const CandidateResult& r) {
  const tune::CandidateCost& c = r.cost;
  const bool measured = r.measured.stats.count > 0;
  return table_row(std::to_string(r.candidate.index), r.candidate.setting,
                   value_text(r.candidate.value), tune::to_string(r.mode), median_cells(r.measured),
                   measured && r.against.pairs > 0 ? ratio_text(r.against) : "",
                   tune::to_string(r.outcome),
                   fmt::format("{:.0f}", c.restart_s + c.warmup_s + c.samples_s));
}

// The searched settings of `to` that differ from `from`, in `to`'s order: "ubatch 1024, …".
std::string changes_text(const json& from, const json& to) {
  std::string out;
  if (!to.is_object()) {
    return out;
  }
  for (const auto& [key, value] : to.items()) {
    if (!from.is_object() || !from.contains(key) || from[key] != value) {
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", key, value_text(value));
    }
  }
  return out;
}

// The settings that measured best: the last better candidate's, else the start's.
json final_settings(const TuneResult& result) {
  if (result.winner.settings.is_object()) {
    return result.winner.settings;
  }
  json settings = result.start.settings;
  for (const CandidateResult& r : result.candidates) {
    settings = r.outcome == tune::Outcome::better ? r.candidate.settings : settings;
  }
  return settings;
}

std::string winner_line(const TuneResult& result) {
  const std::string changes = changes_text(result.start.settings, final_settings(result));
  std::string out = changes.empty()
                        ? "winner: the starting settings (no candidate was better beyond the noise)"
                        : "winner: " + changes;
  const bench::PairedComparison& g = result.gain;
  if (g.pairs == 0) {
    return out + " — not re-measured at the end\n";
  }
  out += fmt::format(" — {:.3f}× the start [{:.3f}, {:.3f}] at {:.4g}%, paired over {} requests",
                     g.ratio, g.ratio_low, g.ratio_high, g.confidence * 100, g.pairs);
  if (g.verdict != bench::Verdict::better) {
    out += fmt::format(" ({})", bench::to_string(g.verdict));
  }
  if (!changes.empty()) {
    out += result.start_again ? "\n  (the final comparison: its last run against the original "
                                "measured right after it)"
                              : "\n  (against the start's first run: the tune ended before the "
                                "final comparison, so nothing is saved on it)";
  }
  return out + "\n";
}

std::string drift_line(const TuneResult& result) {
  const std::string noise =
      result.run_noise_sd > 0
          ? fmt::format(
                "run-to-run noise: {:.1f}% per run (from the incumbent measured around "
                "each candidate), counted in every interval\n",
                result.run_noise_sd * 100)
          : std::string();
  if (!result.drift || result.drift->pairs == 0) {
    return "drift: not measured (the tune ended before the start was measured again)\n" + noise;
  }
  const bench::PairedComparison& d = *result.drift;
  std::string out = fmt::format(
      "drift: the starting settings measured again at the end: {:.3f}× their first run [{:.3f}, "
      "{:.3f}] at {:.4g}% ({})",
      d.ratio, d.ratio_low, d.ratio_high, d.confidence * 100, bench::to_string(d.verdict));
  if (d.verdict == bench::Verdict::better || d.verdict == bench::Verdict::worse) {
    out +=
        ":\n  the server's speed changed during the tune; each candidate was compared with the "
        "incumbent measured around it, so a steady drift decided none";
  }
  return out + "\n" + noise;
}

std::string stop_text(const TuneResult& result) {
  switch (result.stopped) {
    case tune::StopReason::done:
      return "done: every knob's walk ended";
    case tune::StopReason::budget:
      return "stopped by the budget: the next candidate would not have fit";
    case tune::StopReason::interrupted:
      return "stopped: interrupted";
    case tune::StopReason::memory_floor:
      return "stopped: MemAvailable fell below the floor";
    case tune::StopReason::failed:
      return "failed: the starting settings could not be measured";
  }
  return "";
}

std::string skipped_text(const TuneResult& result) {
  std::string out;
  for (const tune::KnobPlan& plan : result.knobs) {
    if (plan.knob != nullptr && !plan.skipped.empty()) {
      out += fmt::format("  {:<14} {}\n", plan.knob->setting, plan.skipped);
    }
  }
  return out.empty() ? out : "skipped knobs:\n" + out;
}

std::vector<SweepRow> chart_rows(const TuneResult& result, std::string& setting) {
  std::map<std::string, int> walked;
  for (const CandidateResult& r : result.candidates) {
    ++walked[r.candidate.setting];
  }
  int most = 0;
  for (const CandidateResult& r : result.candidates) {
    if (walked[r.candidate.setting] > most) {
      most = walked[r.candidate.setting];
      setting = r.candidate.setting;
    }
  }
  std::vector<SweepRow> rows;
  const Measurement* incumbent = &result.start;
  for (const CandidateResult& r : result.candidates) {
    if (r.candidate.setting == setting) {
      if (rows.empty() && r.candidate.incumbent.contains(setting)) {
        const bool known = incumbent->stats.count > 0;
        rows.push_back({r.candidate.incumbent[setting], known ? incumbent : nullptr,
                        known ? "" : "not measured"});
      }
      const bool measured = r.measured.stats.count > 0;
      rows.push_back({r.candidate.value, measured ? &r.measured : nullptr,
                      std::string(tune::to_string(r.outcome))});
    }
    incumbent = r.outcome == tune::Outcome::better ? &r.measured : incumbent;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const SweepRow& a, const SweepRow& b) {
    return a.value.is_number() && b.value.is_number() &&
           a.value.get<double>() < b.value.get<double>();
  });
  return rows;
}

// The bar of one measurement on an axis from `low` to `high` in `cells` columns: the median as
// a filled bar, the interval as [──] drawn over it, the median itself as '|'.
std::string chart_bar(const Measurement& m, double low, double high, int cells) {
  const auto at = [&](double x) {
    const double f = (x - low) / (high - low);
    return std::clamp(static_cast<int>(std::lround(f * (cells - 1))), 0, cells - 1);
  };
  std::vector<std::string> cell(static_cast<std::size_t>(cells), " ");
  const int median = at(m.stats.median);
  for (int i = 0; i < median; ++i) {
    cell[static_cast<std::size_t>(i)] = "█";
  }
  const int from = at(m.interval.low);
  const int to = at(m.interval.high);
  for (int i = from; i <= to; ++i) {
    if (cell[static_cast<std::size_t>(i)] == " ") {
      cell[static_cast<std::size_t>(i)] = "─";
    }
  }
  cell[static_cast<std::size_t>(from)] = "[";
  cell[static_cast<std::size_t>(to)] = "]";
  cell[static_cast<std::size_t>(median)] = "|";
  std::string out;
  for (const std::string& c : cell) {
    out += c;
  }
  return out;
}

json paired_or_null(const std::optional<bench::PairedComparison>& p) {
  return p ? bench::paired_to_json(*p) : json(nullptr);
}

json knob_plan_json(const tune::KnobPlan& plan) {
  return {{"setting", plan.knob->setting},
          {"server_option", plan.knob->server_option},
          {"request_field", plan.knob->request_field},
          {"memory_effect", plan.knob->memory_effect},
          {"lossy", plan.knob->lossy},
          {"mode", tune::to_string(plan.mode)},
          {"ordered", plan.ordered},
          {"values", plan.values},
          {"skipped", plan.skipped}};
}

}  // namespace

std::string render_tune(const TuneResult& result, int width) {
  std::string out = fmt::format(
      "gb10tune tune — goal {}{} ({}){}\n{} candidate{} in {} of a {} budget; {}\n",
      tune::to_string(result.goal),
      result.goal == tune::Goal::throughput ? fmt::format(" @{}", result.concurrency) : "",
      result.metric_label, result.strategy == tune::Strategy::grid ? ", exhaustive grid" : "",
      result.candidates.size(), result.candidates.size() == 1 ? "" : "s",
      duration_text(result.elapsed_s), duration_text(result.budget_s), stop_text(result));
  out += fmt::format(
      "median and its distribution-free interval (conf); vs incumbent: the paired ratio of the "
      "same\nrequests with its Student-t interval at 95%; a candidate is kept only when better "
      "beyond it\n");
  out += table_row("#", "knob", "value", "applied",
                   fmt::format("{:>8}  {:<16} {:>6}", "median", "interval", "conf"), "vs incumbent",
                   "verdict", "cost s");
  out += table_row("", "start", "", "", median_cells(result.start), "", "", "");
  for (const CandidateResult& r : result.candidates) {
    out += candidate_row(r);
    if (!r.why.empty()) {
      out += fmt::format("       {}\n", r.why);
    }
  }
  out += "\n" + winner_line(result) + drift_line(result) + skipped_text(result);
  const std::string chart = render_tune_chart(result, width);
  return chart.empty() ? out : out + "\n" + chart;
}

std::vector<SweepRow> tune_sweep_rows(const TuneResult& result, std::string& setting) {
  return chart_rows(result, setting);
}

std::string render_tune_chart(const TuneResult& result, int width) {
  std::string setting;
  const std::vector<SweepRow> rows = chart_rows(result, setting);
  double low = 0;
  double high = 0;
  int measured = 0;
  for (const SweepRow& row : rows) {
    if (row.measured != nullptr) {
      low = measured == 0 ? row.measured->interval.low : std::min(low, row.measured->interval.low);
      high = std::max(high, row.measured->interval.high);
      ++measured;
    }
  }
  if (measured < 2) {
    return "";
  }
  const double pad = high > low ? (high - low) * 0.05 : std::max(1e-9, std::fabs(high) * 0.01);
  low -= pad;
  high += pad;
  const json winner = final_settings(result);
  const int cells = std::max(10, width - 40);
  std::string out = fmt::format(
      "{} by {} (median |, its interval [─]; axis {:.1f} … {:.1f}, not from 0; * the winner)\n",
      result.metric_label, setting, low, high);
  for (const SweepRow& row : rows) {
    const bool chosen =
        winner.is_object() && winner.contains(setting) && winner[setting] == row.value;
    const std::string label = fmt::format("{}{:>7}", chosen ? "*" : " ", value_text(row.value));
    if (row.measured == nullptr) {
      out += fmt::format("  {} │ {}\n", label, row.outcome);
      continue;
    }
    const Measurement& m = *row.measured;
    out += fmt::format("  {} │{}│ {:.1f} [{:.1f}, {:.1f}]\n", label, chart_bar(m, low, high, cells),
                       m.stats.median, m.interval.low, m.interval.high);
  }
  return out;
}

nlohmann::json tune_to_json(const TuneResult& result) {
  json knobs = json::array();
  for (const tune::KnobPlan& plan : result.knobs) {
    if (plan.knob != nullptr) {
      knobs.push_back(knob_plan_json(plan));
    }
  }
  json candidates = json::array();
  for (const CandidateResult& r : result.candidates) {
    candidates.push_back(tune::candidate_result_to_json(r));
  }
  const json winner = final_settings(result);
  json changes = json::object();
  if (winner.is_object()) {
    for (const auto& [key, value] : winner.items()) {
      if (!result.start.settings.is_object() || result.start.settings.value(key, json()) != value) {
        changes[key] = value;
      }
    }
  }
  return {{"goal", tune::to_string(result.goal)},
          {"strategy", tune::to_string(result.strategy)},
          {"concurrency", result.concurrency},
          {"metric", result.metric_label},
          {"higher_is_better", result.higher_is_better},
          {"stopped", tune::to_string(result.stopped)},
          {"elapsed_s", result.elapsed_s},
          {"budget_s", result.budget_s},
          {"knobs", knobs},
          {"start", tune::measurement_to_json(result.start)},
          {"candidates", candidates},
          {"winner", tune::measurement_to_json(result.winner)},
          {"winner_settings", winner},
          {"winner_changes", changes},
          {"gain", result.gain.pairs > 0 ? bench::paired_to_json(result.gain) : json(nullptr)},
          {"drift", paired_or_null(result.drift)},
          {"start_again",
           result.start_again ? tune::measurement_to_json(*result.start_again) : json(nullptr)},
          {"run_noise_sd", result.run_noise_sd},
          {"worth_saving", tune::worth_saving(result)}};
}

}  // namespace gb10tune::render
