// The one table of launch settings: each setting's key in profiles and the user config, its
// type, built-in default, checks, help, and the launch options that set it. launch's options,
// their --help, the checks of a profile, the user config and the command line all come from it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gb10tune::launch {

// The type of one setting's value.
// `number` is a real number within [number_min, number_max] (a fraction such as a probability).
enum class SettingKind { text, integer, boolean, text_list, number };

// A launch switch that sets a setting to one value ("--no-kvu" sets kv_unified to "off").
struct SettingFlag {
  std::string_view name;  // "--no-kvu"
  nlohmann::json value;   // what it sets
  std::string_view help;  // its --help line, as shown
};

// One launch setting: its key in profiles, its type, its built-in default, its checks, and the
// launch options that set it.
struct SettingSpec {
  std::string_view key = {};  // "slots", "ctx_per_slot", …
  SettingKind kind = SettingKind::text;
  nlohmann::json built_in = {};                // the default when no layer sets it
  std::vector<std::string_view> choices = {};  // allowed texts; empty = any
  std::int64_t min = 0;                        // integer range
  std::int64_t max = 0;
  double number_min = 0;  // number range
  double number_max = 0;
  std::string_view help = {};
  // The launch option that takes its value, as CLI11 names it ("--model,-m"); "" when none.
  std::string_view option = {};
  // What that option takes ("N", "SIZE"); "" = its choices ("on|off|auto").
  std::string_view value_text = {};
  std::vector<SettingFlag> flags = {};  // switches that set it to one value
};

// Every launch setting, in display order.
const std::vector<SettingSpec>& launch_setting_specs();

// The spec of `key`; nullptr when no setting has that key.
const SettingSpec* find_setting_spec(std::string_view key);

// The launch option of setting `key` for messages: its option's first name ("--slots"), else
// its switches ("--kvu/--no-kvu"), else the key as an option ("--extra-args").
std::string setting_option(std::string_view key);

// The --help text of `spec`'s option: its help as a sentence, then in brackets the built-in
// default (unless empty text), each shipped profile's value, and an integer's range.
std::string setting_help(const SettingSpec& spec);

// The value text of `spec`'s option: spec.value_text, else its choices joined with '|'.
std::string setting_value_text(const SettingSpec& spec);

}  // namespace gb10tune::launch
