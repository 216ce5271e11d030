// The winner of a tune as a profile `launch --profile NAME` starts: a settings document in the
// user's profile directory ($XDG_CONFIG_HOME/gb10tune/profiles/NAME.json) with, besides its
// settings, what it was tuned for (model, build, machine, goal, workload, date, gain), so that
// `launch` can name it when it starts the same model with the same build.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::tune {

// What a tuned profile was measured for.
struct TunedFor {
  std::string model_path;  // absolute
  std::string model_name;  // its file name
  std::string build;       // the server's build_info
  std::string machine;     // "NVIDIA GB10", "CPU: AMD EPYC …"
  std::string goal;        // "decode", "throughput @4", "prefill"
  std::string workload;    // its source
  std::string tuned_at;    // ISO 8601
  double gain = 1;         // winner / start (the goal's direction), paired
  double gain_low = 1;     // its interval
  double gain_high = 1;
  double confidence = 0.95;
};

// A tuned profile's document: {"description", "settings", "tuned": {…}}. `settings` are the
// complete launch settings the winner ran with (key → value).
nlohmann::json tuned_profile_document(const nlohmann::json& settings, const TunedFor& tuned);

// The user's profile directory: $XDG_CONFIG_HOME/gb10tune/profiles (~/.config/…).
std::filesystem::path user_profile_dir(const platform::Environment& env);

// The name a tune gives its profile: "tuned-<model file stem>-<goal>" in lower case, with
// characters other than [a-z0-9._-] as '-'.
std::string tuned_profile_name(const TunedFor& tuned);

// A tuned profile found for a model and build.
struct FoundProfile {
  std::string name;
  std::filesystem::path path;
  TunedFor tuned;
};

// The tuned profiles in `dir` whose model path and build equal the given ones, newest first; a
// file that is not a tuned profile is passed over.
std::vector<FoundProfile> find_tuned_profiles(const std::filesystem::path& dir,
                                              const std::string& model_path,
                                              const std::string& build);

}  // namespace gb10tune::tune
