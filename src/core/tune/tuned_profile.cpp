#include "gb10tune/tune/tuned_profile.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "gb10tune/launch/profile.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/util/json_field.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::tune {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json tuned_change_to_json(const TunedChange& c) {
  return {{"setting", c.setting},
          {"from", c.from},
          {"to", c.to},
          {"with", c.with},
          {"metric", c.metric},
          {"ratio", c.ratio},
          {"ratio_low", c.ratio_low},
          {"ratio_high", c.ratio_high},
          {"confidence", c.confidence}};
}

bool tuned_change_from_json(const json& doc, TunedChange& c) {
  std::string error;
  if (!doc.is_object() || !doc.contains("from") || !doc.contains("to")) {
    return false;
  }
  c.from = doc["from"];
  c.to = doc["to"];
  if (const auto with = doc.find("with"); with != doc.end() && with->is_array()) {
    for (const json& name : *with) {
      if (!name.is_string()) {
        return false;
      }
      c.with.push_back(name.get<std::string>());
    }
  }
  return get_field(doc, "setting", c.setting, error) && get_field(doc, "metric", c.metric, error) &&
         get_field(doc, "ratio", c.ratio, error) &&
         get_field(doc, "ratio_low", c.ratio_low, error) &&
         get_field(doc, "ratio_high", c.ratio_high, error) &&
         get_field(doc, "confidence", c.confidence, error);
}

json tuned_for_to_json(const TunedFor& t) {
  json changes = json::array();
  for (const TunedChange& c : t.changes) {
    changes.push_back(tuned_change_to_json(c));
  }
  return {{"model_path", t.model_path},
          {"model_name", t.model_name},
          {"build", t.build},
          {"server_build", t.server_build},
          {"machine", t.machine},
          {"goal", t.goal},
          {"workload", t.workload},
          {"tuned_at", t.tuned_at},
          {"gain", t.gain},
          {"gain_low", t.gain_low},
          {"gain_high", t.gain_high},
          {"confidence", t.confidence},
          {"changes", changes}};
}

// "off", "3", "0.5": a setting's value as text.
std::string tuned_value_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// Whether two model paths name one file (the same path, or the same file under two names).
bool same_model_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return a == b || (!a.empty() && !b.empty() && fs::equivalent(a, b, ec) && !ec);
}

// The tuned profile at `path`, when it is one.
std::optional<FoundProfile> read_tuned_profile(const fs::path& path) {
  const auto text = read_text_file(path);
  if (!text) {
    return std::nullopt;
  }
  const auto doc = launch::parse_settings_document(*text, path.string());
  FoundProfile found;
  if (!doc) {
    return std::nullopt;
  }
  auto tuned = tuned_for_from_json(doc->tuned);
  if (!tuned) {
    return std::nullopt;  // not valid, or a profile of the user's own
  }
  found.tuned = std::move(*tuned);
  found.name = path.stem().string();
  found.path = path;
  return found;
}

}  // namespace

std::optional<TunedFor> tuned_for_from_json(const json& doc) {
  TunedFor t;
  std::string error;
  if (!doc.is_object()) {
    return std::nullopt;
  }
  const bool read =
      get_field(doc, "model_path", t.model_path, error) &&
      get_field(doc, "model_name", t.model_name, error) &&
      get_field(doc, "build", t.build, error) && get_field(doc, "machine", t.machine, error) &&
      get_field(doc, "goal", t.goal, error) && get_field(doc, "workload", t.workload, error) &&
      get_field(doc, "tuned_at", t.tuned_at, error) && get_field(doc, "gain", t.gain, error) &&
      get_field(doc, "gain_low", t.gain_low, error) &&
      get_field(doc, "gain_high", t.gain_high, error) &&
      get_field(doc, "confidence", t.confidence, error);
  if (!read) {
    return std::nullopt;
  }
  // Written by newer gb10tune only: an older profile has neither.
  if (const auto build = doc.find("server_build"); build != doc.end() && build->is_string()) {
    t.server_build = build->get<std::string>();
  }
  if (const auto changes = doc.find("changes"); changes != doc.end() && changes->is_array()) {
    for (const json& entry : *changes) {
      TunedChange change;
      if (!tuned_change_from_json(entry, change)) {
        return std::nullopt;
      }
      t.changes.push_back(std::move(change));
    }
  }
  return t;
}

std::vector<TunedChange> tuned_changes(const TuneResult& result) {
  const json& start = result.start.settings;
  const json& winner = result.winner.settings;
  std::vector<TunedChange> kept;
  for (const CandidateResult& c : result.candidates) {
    if (c.outcome != Outcome::better || !c.candidate.settings.is_object()) {
      continue;
    }
    std::vector<std::string> changed;
    for (const auto& [key, value] : c.candidate.settings.items()) {
      if (!c.candidate.incumbent.contains(key) || c.candidate.incumbent[key] != value) {
        changed.push_back(key);
      }
    }
    for (const std::string& key : changed) {
      TunedChange change;
      change.setting = key;
      change.from = c.candidate.incumbent.value(key, json(nullptr));
      change.to = c.candidate.settings[key];
      for (const std::string& other : changed) {
        if (other != key) {
          change.with.push_back(other);
        }
      }
      change.metric = result.metric_label;
      const bench::PairedComparison& p = c.against;
      change.confidence = p.confidence;
      if (result.higher_is_better || p.ratio <= 0) {
        change.ratio = p.ratio;
        change.ratio_low = p.ratio_low;
        change.ratio_high = p.ratio_high;
      } else {
        // A time: how much shorter, as a speed-up (the gain's direction).
        change.ratio = 1 / p.ratio;
        change.ratio_low = p.ratio_high > 0 ? 1 / p.ratio_high : 0;
        change.ratio_high = p.ratio_low > 0 ? 1 / p.ratio_low : 0;
      }
      kept.push_back(std::move(change));
    }
  }
  // Only the steps of the knobs the winner holds at another value than the start, and only
  // when their last step leads to the winner's value (a grid may step back).
  std::vector<TunedChange> out;
  for (const TunedChange& change : kept) {
    const std::string& key = change.setting;
    if (!winner.contains(key) || (start.contains(key) && start[key] == winner[key])) {
      continue;
    }
    const auto last = std::find_if(kept.rbegin(), kept.rend(),
                                   [&](const TunedChange& c) { return c.setting == key; });
    if (last->to == winner[key]) {
      out.push_back(change);
    }
  }
  return out;
}

std::vector<server::MeasuredSetting> measured_settings(const TunedFor& tuned,
                                                       const std::string& profile,
                                                       const std::string& model_path,
                                                       const std::string& server_build) {
  std::string not_applied;
  if (!same_model_file(tuned.model_path, model_path)) {
    not_applied = fmt::format("profile {} was tuned for the model {}, not {}: the rule stands",
                              profile, tuned.model_path, model_path);
  } else if (tuned.server_build != server_build) {
    not_applied = fmt::format(
        "profile {} was tuned with another llama-server build ({}), not this one ({}): the "
        "rule stands; tune again to measure this build",
        profile, tuned.server_build.empty() ? std::string("not recorded") : tuned.server_build,
        server_build);
  }
  std::vector<server::MeasuredSetting> out;
  for (const Knob& knob : knob_table()) {
    if (knob.rule.empty()) {
      continue;
    }
    std::vector<const TunedChange*> steps;
    for (const TunedChange& change : tuned.changes) {
      if (change.setting == knob.setting) {
        steps.push_back(&change);
      }
    }
    if (steps.empty()) {
      continue;
    }
    const json& to = steps.back()->to;
    server::MeasuredSetting m;
    m.rule = std::string(knob.rule);
    m.option = std::string(knob.rule_option);
    // mtp off is no --spec-type at all; the others are the option's value.
    m.value = knob.setting == "mtp" ? (to == "off" ? "" : "draft-mtp") : tuned_value_text(to);
    std::string measured;
    for (const TunedChange* step : steps) {
      measured += fmt::format(
          "{}{} → {} {:.2f}× [{:.2f}, {:.2f}]{}", measured.empty() ? "" : ", then ",
          tuned_value_text(step->from), tuned_value_text(step->to), step->ratio, step->ratio_low,
          step->ratio_high,
          step->with.empty() ? ""
                             : fmt::format(" (with {} changed too)", fmt::join(step->with, ", ")));
    }
    m.citation = fmt::format(
        "{} {}: measured by gb10tune tune on {} (profile {}): {} {} at {:.4g}%, on this model "
        "and build",
        knob.setting, tuned_value_text(to), tuned.tuned_at.substr(0, 10), profile, measured,
        steps.back()->metric, steps.back()->confidence * 100);
    m.not_applied = not_applied;
    out.push_back(std::move(m));
  }
  return out;
}

json tuned_profile_document(const json& settings, const TunedFor& tuned) {
  const std::string description = fmt::format(
      "Tuned by gb10tune tune for {} ({}) on {}, {}: {:.3f}× the starting settings [{:.3f}, "
      "{:.3f}] at {:.4g}%, build {}, workload {}",
      tuned.model_name, tuned.goal, tuned.machine, tuned.tuned_at, tuned.gain, tuned.gain_low,
      tuned.gain_high, tuned.confidence * 100, tuned.build, tuned.workload);
  return {
      {"description", description}, {"settings", settings}, {"tuned", tuned_for_to_json(tuned)}};
}

fs::path user_profile_dir(const platform::Environment& env) {
  const auto dir = platform::config_dir(env);
  return dir ? *dir / "profiles" : fs::path();
}

std::string tuned_profile_name(const TunedFor& tuned) {
  const fs::path model(tuned.model_name.empty() ? tuned.model_path : tuned.model_name);
  const std::string raw = "tuned-" + model.stem().string() + "-" + tuned.goal;
  // Other characters become '-', and a run of them one ("throughput @2" → "throughput-2").
  std::string name;
  for (const char raw_c : raw) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(raw_c)));
    const bool kept = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
    if (kept) {
      name += c;
    } else if (name.empty() || name.back() != '-') {
      name += '-';
    }
  }
  while (!name.empty() && name.back() == '-') {
    name.pop_back();
  }
  return name;
}

std::vector<FoundProfile> find_tuned_profiles(const fs::path& dir, const std::string& model_path,
                                              const std::string& build) {
  std::vector<FoundProfile> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json" || !entry.is_regular_file(ec)) {
      continue;
    }
    auto profile = read_tuned_profile(entry.path());
    if (profile && profile->tuned.model_path == model_path && profile->tuned.build == build) {
      found.push_back(std::move(*profile));
    }
  }
  std::sort(found.begin(), found.end(), [](const FoundProfile& a, const FoundProfile& b) {
    return a.tuned.tuned_at != b.tuned.tuned_at ? a.tuned.tuned_at > b.tuned.tuned_at
                                                : a.name < b.name;
  });
  return found;
}

}  // namespace gb10tune::tune
