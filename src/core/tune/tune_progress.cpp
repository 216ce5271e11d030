#include "gb10tune/tune/tune_progress.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gb10tune::tune {

namespace {

// A setting's value as a person writes it: text without quotes.
std::string value_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// "draft_n_max=5 ubatch=512" for the settings that differ from none (all of them).
std::string settings_text(const nlohmann::json& settings) {
  std::string text;
  for (const auto& [key, value] : settings.items()) {
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", key, value_text(value));
  }
  return text.empty() ? std::string("the start") : text;
}

}  // namespace

std::string format_duration(double seconds) {
  const auto total = static_cast<long>(std::lround(std::max(0.0, seconds)));
  if (total < 60) {
    return fmt::format("{}s", total);
  }
  if (total < 3600) {
    return fmt::format("{}m{:02}s", total / 60, total % 60);
  }
  return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
}

std::string describe_change(const Candidate& candidate) {
  return fmt::format("{}={}", candidate.setting, value_text(candidate.value));
}

std::string progress_line(const TuneEvent& event, const std::string& metric_label) {
  const std::string clock =
      event.eta_s ? fmt::format("{} elapsed, ETA {}", format_duration(event.elapsed_s),
                                format_duration(*event.eta_s))
                  : fmt::format("{} elapsed", format_duration(event.elapsed_s));
  const std::string best = event.best_median > 0
                               ? fmt::format(" · best {:.4g} {} ({})", event.best_median,
                                             metric_label, settings_text(event.best))
                               : std::string();
  switch (event.kind) {
    case TuneEventKind::measuring_start:
      return fmt::format("tune: measuring the starting settings · {}", clock);
    case TuneEventKind::candidate:
    case TuneEventKind::candidate_done:
    case TuneEventKind::costs_known: {
      const std::string change =
          event.candidate ? " " + describe_change(*event.candidate) : std::string();
      const int index = event.candidate ? event.candidate->index : 0;
      return fmt::format("tune: candidate {}/≈{}{}{} · {}", index,
                         std::max(event.estimated_total, index), change, best, clock);
    }
    case TuneEventKind::remeasure:
      return fmt::format("tune: re-measuring the best settings{} · {}", best, clock);
    case TuneEventKind::restoring:
      return fmt::format("tune: starting the original server again · {}", clock);
  }
  return "";
}

std::string costs_line(const TuneEvent& event, double budget_s) {
  return fmt::format(
      "tune: a restart costs {:.1f} s and a sample {:.2f} s: about {} more candidates fit in "
      "the {} budget",
      event.restart_s.value_or(0), event.sample_s.value_or(0), event.candidates_left.value_or(0),
      format_duration(budget_s));
}

std::string candidate_line(const CandidateResult& result) {
  const std::string head =
      fmt::format("candidate {} {}", result.candidate.index, describe_change(result.candidate));
  switch (result.outcome) {
    case Outcome::does_not_fit:
      return fmt::format("{}: does not fit, never started ({})", head, result.why);
    case Outcome::failed:
      return fmt::format("{}: failed ({})", head, result.why);
    case Outcome::better:
    case Outcome::not_better:
      break;
  }
  const bench::PairedComparison& p = result.against;
  const std::string restart =
      result.cost.restart_s > 0 ? fmt::format("restarts {:.1f} s, ", result.cost.restart_s) : "";
  const std::string rounds =
      result.rounds > 1 ? fmt::format(" in {} rounds", result.rounds) : std::string();
  const std::string drift =
      result.drift ? fmt::format(", incumbent drift ×{:.3f}", result.drift->ratio) : std::string();
  return fmt::format(
      "{}: {} ×{:.3f} [{:.3f}, {:.3f}] {:.0f}% over {} pairs{}{} ({}{} samples {:.1f} s)", head,
      to_string(result.outcome), p.ratio, p.ratio_low, p.ratio_high, p.confidence * 100, p.pairs,
      rounds, drift, restart, result.cost.samples, result.cost.samples_s);
}

std::string nothing_saved_line(const TuneResult& result) {
  if (winner_is_start(result)) {
    return "nothing beat the starting settings beyond the noise: nothing saved (they are the "
           "best this tune found)";
  }
  std::string changes;
  for (const auto& [key, value] : result.winner.settings.items()) {
    const auto start = result.start.settings.find(key);
    if (start == result.start.settings.end() || *start != value) {
      changes += fmt::format("{}{}={}", changes.empty() ? "" : " ", key, value_text(value));
    }
  }
  if (!result.start_again) {
    return fmt::format(
        "the {} ended before the final comparison of the winner ({}) with the original: nothing "
        "saved; continue with: gb10tune tune --resume --budget DURATION",
        result.stopped == StopReason::budget ? "budget" : "tune", changes);
  }
  const bench::PairedComparison& g = result.gain;
  return fmt::format(
      "the winner ({}) read ×{:.3f} [{:.3f}, {:.3f}] against the original measured right after "
      "it: not better beyond the noise, nothing saved",
      changes, g.ratio, g.ratio_low, g.ratio_high);
}

}  // namespace gb10tune::tune
