// Launch settings and where each value comes from: built-in defaults < profile (configs/) <
// the user's config ($XDG_CONFIG_HOME/gb10tune/config.json) < the command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/launch/setting_specs.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// One layer of settings: where it comes from and what it sets.
struct SettingsLayer {
  std::string source;  // "built-in", "profile gb10-dense-mtp", "user config /…/config.json",
                       // "command line"
  nlohmann::json values = nlohmann::json::object();  // key → value
};

// A settings document (profile or user config) as read from disk.
struct SettingsDocument {
  std::string description;  // "description" (profiles)
  std::string profile;      // "profile": the profile a user config selects ("" = none)
  nlohmann::json settings = nlohmann::json::object();
  // "tuned": what `gb10tune tune` measured a profile it wrote for (model, build, machine, goal,
  // gain; tune/tuned_profile reads it); null when absent. launch starts the settings alone.
  nlohmann::json tuned = nullptr;
};

// Parses a profile or user config: {"description"?, "profile"?, "settings": {key: value},
// "tuned"?: {…}}.
// Syntax errors name `source`, the line and the column; unknown keys and mistyped or
// out-of-range values name the key and what is allowed. Exit code usage.
Expected<SettingsDocument> parse_settings_document(std::string_view text,
                                                   const std::string& source);

// Checks one value against its spec; an Error naming `source` and the key when it does not fit.
Status check_setting(std::string_view key, const nlohmann::json& value, const std::string& source);

// A resolved value and the layer it came from.
struct ResolvedSetting {
  nlohmann::json value;
  std::string source;
  std::vector<std::pair<std::string, nlohmann::json>> overridden;  // lower layers' values
};

// The settings after layering; every spec key is present.
class LaunchSettings {
 public:
  // Applies `layers` in order (built-in defaults first, implicitly); later layers win.
  static LaunchSettings resolve(const std::vector<SettingsLayer>& layers);

  const ResolvedSetting& at(std::string_view key) const;
  std::string text(std::string_view key) const;
  std::int64_t integer(std::string_view key) const;
  double number(std::string_view key) const;  // an integer's value too
  bool boolean(std::string_view key) const;
  std::vector<std::string> text_list(std::string_view key) const;
  // Every setting in display order.
  const std::vector<std::pair<std::string, ResolvedSetting>>& all() const { return m_values; }

 private:
  std::vector<std::pair<std::string, ResolvedSetting>> m_values;
};

// The profiles shipped with gb10tune (configs/*.json, compiled in): name → JSON text.
const std::map<std::string, std::string_view>& builtin_profiles();

// The profile `name_or_path`: a shipped profile's name, else the user's NAME.json in
// `user_dir` ($XDG_CONFIG_HOME/gb10tune/profiles, where `gb10tune tune` saves its winners; a
// shipped name wins over a user file of the same name), else a path to a JSON file. A usage
// Error listing the shipped names and the user's when it is none of them.
Expected<SettingsDocument> load_profile(const std::string& name_or_path,
                                        const std::filesystem::path& user_dir = {});

// The names of the user's profiles in `user_dir` (NAME of each NAME.json), sorted; none when
// the folder does not exist.
std::vector<std::string> user_profile_names(const std::filesystem::path& user_dir);

// When `name` is a shipped profile and `user_dir` also holds NAME.json: the sentence saying
// that the shipped one is used and how to use the user's; nullopt otherwise.
std::optional<std::string> shadowed_profile_note(const std::string& name,
                                                 const std::filesystem::path& user_dir);

}  // namespace gb10tune::launch
