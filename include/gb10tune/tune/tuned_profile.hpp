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
#include "gb10tune/server/rules.hpp"
#include "gb10tune/tune/tune_result.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::tune {

// One kept step of a tune: a candidate that changed `setting` from `from` to `to` and was better
// than the incumbent beyond the noise.
struct TunedChange {
  std::string setting;  // the knob's setting ("flash_attn")
  nlohmann::json from;  // the incumbent's value
  nlohmann::json to;    // the candidate's
  // The other settings the same candidate changed (a grid point): measured together.
  std::vector<std::string> with;
  std::string metric;  // "decode t/s", "time to first token ms", …
  // The paired ratio against the incumbent as a gain (> 1 better; a time's ratio inverted).
  double ratio = 1;
  double ratio_low = 1;
  double ratio_high = 1;
  double confidence = 0.95;
};

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
  // The llama-server binary it was tuned with (launch::server_build_identity: path, size,
  // time); "" in a profile of an older gb10tune.
  std::string server_build = "";
  // Per knob the winner changed, the kept steps that changed it, in order (empty in a profile of
  // an older gb10tune): the evidence a rule's citation is made of.
  std::vector<TunedChange> changes = {};
};

// A tuned profile's document: {"description", "settings", "tuned": {…}}. `settings` are the
// complete launch settings the winner ran with (key → value).
nlohmann::json tuned_profile_document(const nlohmann::json& settings, const TunedFor& tuned);

// The "tuned" object of a profile document read back; nullopt when it is not one (a field
// missing or mistyped). server_build and changes are optional (older profiles).
std::optional<TunedFor> tuned_for_from_json(const nlohmann::json& tuned);

// The kept steps of `result`'s candidates that lead to the winner's value of each knob the
// winner changed from the start.
std::vector<TunedChange> tuned_changes(const TuneResult& result);

// What the tune measured for the knobs a rule gives advice on (knob_table's rule), as
// server::MeasuredSetting for launch's and verify's rules: a citation naming the date, the
// profile, each kept step and its ratio. They apply only when `tuned` was made for
// `model_path` and the llama-server binary of identity `server_build`; otherwise not_applied
// says which differs.
std::vector<server::MeasuredSetting> measured_settings(const TunedFor& tuned,
                                                       const std::string& profile,
                                                       const std::string& model_path,
                                                       const std::string& server_build);

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
