// The settings of a benchmarked server, flattened to "key" → "value" so that two runs can be
// told apart setting by setting (K7: one change at a time).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gb10tune::bench {

// Flat settings. Keys: "model", "build", "props:<field>" (from /props), "argv:<flag>" (from
// the launch record's argv).
using RunSettings = std::map<std::string, std::string>;

// From a /props answer: "model" (model_path), "build" (build_info), "props:total_slots",
// "props:n_ctx" (per slot) and every scalar of default_generation_settings.params as
// "props:params.<dotted key>" (arrays as compact JSON). Missing fields are left out.
RunSettings settings_from_props(const nlohmann::json& props);

// From an argv vector (argv[0], the program, is skipped): "argv:<flag>" → its value, or "on"
// for a switch. A following word is a value unless it starts with '-' and is not a number.
// The model flags (-m, --model) are left out: "model" names the model once.
RunSettings settings_from_argv(const std::vector<std::string>& argv);

// One setting that differs between two runs; an empty side means "not set".
struct SettingDifference {
  std::string key;
  std::string a;
  std::string b;
};

// The differences between `a` and `b` that count for K7: "model", "build", and the "argv:"
// keys when both runs have any (the flags are the causes; one flag can move several /props
// fields, -np both total_slots and n_ctx), else the "props:" keys.
std::vector<SettingDifference> setting_differences(const RunSettings& a, const RunSettings& b);

}  // namespace gb10tune::bench
