#include "gb10tune/tune/tuned_profile.hpp"

#include <fmt/format.h>

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

json tuned_for_to_json(const TunedFor& t) {
  return {{"model_path", t.model_path},
          {"model_name", t.model_name},
          {"build", t.build},
          {"machine", t.machine},
          {"goal", t.goal},
          {"workload", t.workload},
          {"tuned_at", t.tuned_at},
          {"gain", t.gain},
          {"gain_low", t.gain_low},
          {"gain_high", t.gain_high},
          {"confidence", t.confidence}};
}

bool tuned_for_from_json(const json& doc, TunedFor& t) {
  std::string error;
  return get_field(doc, "model_path", t.model_path, error) &&
         get_field(doc, "model_name", t.model_name, error) &&
         get_field(doc, "build", t.build, error) && get_field(doc, "machine", t.machine, error) &&
         get_field(doc, "goal", t.goal, error) && get_field(doc, "workload", t.workload, error) &&
         get_field(doc, "tuned_at", t.tuned_at, error) && get_field(doc, "gain", t.gain, error) &&
         get_field(doc, "gain_low", t.gain_low, error) &&
         get_field(doc, "gain_high", t.gain_high, error) &&
         get_field(doc, "confidence", t.confidence, error);
}

// The tuned profile at `path`, when it is one.
std::optional<FoundProfile> read_tuned_profile(const fs::path& path) {
  const auto text = read_text_file(path);
  if (!text) {
    return std::nullopt;
  }
  const auto doc = launch::parse_settings_document(*text, path.string());
  FoundProfile found;
  if (!doc || !doc->tuned.is_object() || !tuned_for_from_json(doc->tuned, found.tuned)) {
    return std::nullopt;  // not valid, or a profile of the user's own
  }
  found.name = path.stem().string();
  found.path = path;
  return found;
}

}  // namespace

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
