#include "gb10tune/tune/tune_result.hpp"

#include <fmt/format.h>

#include "gb10tune/util/json_field.hpp"

namespace gb10tune::tune {

namespace {

using nlohmann::json;

json cost_to_json(const CandidateCost& cost) {
  return {{"restart_s", cost.restart_s},
          {"warmup_s", cost.warmup_s},
          {"samples_s", cost.samples_s},
          {"samples", cost.samples}};
}

bool cost_from_json(const json& doc, CandidateCost& cost, std::string& error) {
  return get_field(doc, "restart_s", cost.restart_s, error) &&
         get_field(doc, "warmup_s", cost.warmup_s, error) &&
         get_field(doc, "samples_s", cost.samples_s, error) &&
         get_field(doc, "samples", cost.samples, error);
}

// `text` as an Outcome or an ApplyMode (to_string's words); false when it is neither.
template <class Enum, std::size_t N>
bool enum_from_text(const std::string& text, const Enum (&all)[N], Enum& out) {
  for (const Enum value : all) {
    if (to_string(value) == text) {
      out = value;
      return true;
    }
  }
  return false;
}

// Reads the sub-object `name` of `doc` with `read`, prefixing its error with the name.
template <class T, class Reader>
bool sub_object(const json& doc, const char* name, T& target, std::string& error, Reader read_sub) {
  json sub;
  if (!get_field(doc, name, sub, error)) {
    return false;
  }
  if (!read_sub(sub, target, error)) {
    error = fmt::format("in '{}': {}", name, error);
    return false;
  }
  return true;
}

}  // namespace

Measurement make_measurement(nlohmann::json settings, std::vector<std::string> requests,
                             std::vector<double> values) {
  Measurement m;
  m.settings = std::move(settings);
  m.requests = std::move(requests);
  m.values = std::move(values);
  std::vector<double> reported;
  for (const double v : m.values) {
    if (v > 0) {
      reported.push_back(v);
    }
  }
  m.stats = bench::summarize(reported);
  m.interval = bench::median_interval(reported);
  return m;
}

json measurement_to_json(const Measurement& m) {
  return {{"settings", m.settings},
          {"requests", m.requests},
          {"values", m.values},
          {"at_s", m.at_s},
          {"count", m.stats.count},
          {"median", m.stats.median},
          {"median_interval",
           {{"low", m.interval.low},
            {"high", m.interval.high},
            {"confidence", m.interval.confidence}}}};
}

bool measurement_from_json(const json& doc, Measurement& m, std::string& error) {
  json settings;
  std::vector<std::string> requests;
  std::vector<double> values;
  if (!get_field(doc, "settings", settings, error) ||
      !get_field(doc, "requests", requests, error) || !get_field(doc, "values", values, error)) {
    return false;
  }
  if (requests.size() != values.size()) {
    error = fmt::format("{} requests but {} values", requests.size(), values.size());
    return false;
  }
  m = make_measurement(std::move(settings), std::move(requests), std::move(values));
  if (const auto at = doc.find("at_s"); at != doc.end() && at->is_number()) {
    m.at_s = at->get<double>();
  }
  return true;
}

bool promising(const bench::PairedComparison& against, bool higher_is_better) {
  const double ratio = against.ratio;
  return against.verdict != bench::Verdict::worse && against.verdict != bench::Verdict::better &&
         ratio > 0 &&
         (higher_is_better ? ratio >= 1 + kSmallestGain : ratio <= 1 / (1 + kSmallestGain));
}

Decision decision_of(const CandidateResult& result, bool higher_is_better) {
  Decision decision{result.outcome};
  if (result.outcome != Outcome::not_better) {
    return decision;
  }
  decision.worse = result.against.verdict == bench::Verdict::worse;
  decision.promising = promising(result.against, higher_is_better);
  return decision;
}

json candidate_result_to_json(const CandidateResult& r) {
  json doc = {{"index", r.candidate.index},
              {"pass", r.candidate.pass},
              {"setting", r.candidate.setting},
              {"value", r.candidate.value},
              {"settings", r.candidate.settings},
              {"incumbent", r.candidate.incumbent},
              {"mode", to_string(r.mode)},
              {"outcome", to_string(r.outcome)},
              {"why", r.why},
              {"measured", measurement_to_json(r.measured)},
              {"against", bench::paired_to_json(r.against)},
              {"cost", cost_to_json(r.cost)},
              {"rounds", r.rounds}};
  if (r.after) {
    doc["after"] = measurement_to_json(*r.after);
  }
  if (r.drift) {
    doc["drift"] = bench::paired_to_json(*r.drift);
  }
  return doc;
}

bool candidate_result_from_json(const json& doc, CandidateResult& r, std::string& error) {
  std::string mode;
  std::string outcome;
  if (!get_field(doc, "index", r.candidate.index, error) ||
      !get_field(doc, "setting", r.candidate.setting, error) ||
      !get_field(doc, "value", r.candidate.value, error) ||
      !get_field(doc, "settings", r.candidate.settings, error) ||
      !get_field(doc, "incumbent", r.candidate.incumbent, error) ||
      !get_field(doc, "mode", mode, error) || !get_field(doc, "outcome", outcome, error) ||
      !get_field(doc, "why", r.why, error)) {
    return false;
  }
  constexpr ApplyMode kModes[] = {ApplyMode::restart, ApplyMode::per_request};
  constexpr Outcome kOutcomes[] = {Outcome::better, Outcome::not_better, Outcome::does_not_fit,
                                   Outcome::failed};
  if (!enum_from_text(mode, kModes, r.mode)) {
    error = fmt::format("field 'mode' is not restart or per request ('{}')", mode);
    return false;
  }
  if (!enum_from_text(outcome, kOutcomes, r.outcome)) {
    error = fmt::format("field 'outcome' is not an outcome ('{}')", outcome);
    return false;
  }
  if (!sub_object(doc, "measured", r.measured, error, measurement_from_json) ||
      !sub_object(doc, "against", r.against, error, bench::paired_from_json) ||
      !sub_object(doc, "cost", r.cost, error, cost_from_json)) {
    return false;
  }
  // Written by this version: absent in older journals.
  r.candidate.pass =
      doc.contains("pass") && doc["pass"].is_number_integer() ? doc["pass"].get<int>() : 1;
  r.rounds =
      doc.contains("rounds") && doc["rounds"].is_number_integer() ? doc["rounds"].get<int>() : 1;
  r.after.reset();
  if (doc.contains("after")) {
    Measurement after;
    if (!sub_object(doc, "after", after, error, measurement_from_json)) {
      return false;
    }
    r.after = std::move(after);
  }
  r.drift.reset();
  if (doc.contains("drift")) {
    bench::PairedComparison drift;
    if (!sub_object(doc, "drift", drift, error, bench::paired_from_json)) {
      return false;
    }
    r.drift = drift;
  }
  return true;
}

bool winner_is_start(const TuneResult& result) {
  return result.winner.settings == result.start.settings;
}

bool worth_saving(const TuneResult& result) {
  return (result.stopped == StopReason::done || result.stopped == StopReason::budget) &&
         !winner_is_start(result) && result.gain.verdict == bench::Verdict::better;
}

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::done:
      return "done";
    case StopReason::budget:
      return "budget";
    case StopReason::interrupted:
      return "interrupted";
    case StopReason::memory_floor:
      return "memory floor";
    case StopReason::failed:
      return "failed";
  }
  return "unknown";
}

}  // namespace gb10tune::tune
