// Where a launch's settings come from, in order: built-in < profile < the user config
// ($XDG_CONFIG_HOME/gb10tune/config.json) < the command line (< what the fit lowered).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "gb10tune/launch/launch_request.hpp"
#include "gb10tune/launch/profile.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// The layers below the command line.
struct SettingsLayers {
  std::optional<SettingsDocument> user;              // nullopt: no user config
  std::string user_path;                             // where the user config is (or would be)
  std::string profile;                               // name or path; "" until chosen
  std::string profile_reason;                        // "--profile", "user config", "chosen: …"
  std::optional<SettingsDocument> profile_settings;  // nullopt until loaded
  // The user's profiles ($XDG_CONFIG_HOME/gb10tune/profiles); empty when no config folder.
  std::filesystem::path user_profiles;
};

// The user config and the profile it or the command line names (not loaded yet). A usage Error
// naming the file when the user config cannot be read or is not a valid settings document.
Expected<SettingsLayers> read_settings_layers(const LaunchRequest& request,
                                              const platform::Environment& env);

// Loads the profile the command line or the user config names, if any and not loaded yet (so
// that a profile naming the model, as a tuned one does, finds it). A usage Error when it does
// not exist or is not valid.
Status load_named_profile(SettingsLayers& layers);

// Loads the profile: the one named, else gb10-moe for a mixture of experts and gb10-dense-mtp
// for any other model. A usage Error when the named profile does not exist or is not valid.
Status load_launch_profile(SettingsLayers& layers, const model::ModelFacts& model);

// The settings: built-in < the profile (once loaded) < the user config < the command line <
// `fitted` (what the fit lowered, when given).
LaunchSettings resolve_settings(const SettingsLayers& layers, const LaunchRequest& request,
                                const SettingsLayer* fitted = nullptr);

// -c (all slots together) as ctx_per_slot: spread over the slots the layers give, 0 staying 0
// (the model's native context per slot), as for llama-server. A usage Error when both -c and
// --ctx-per-slot are given, or -c gives a slot less than 1 token or more than ctx_per_slot's
// maximum.
Status spread_context_size(LaunchRequest& request, const SettingsLayers& layers);

// A usage Error naming the setting and its source when a KV cache type is not one llama.cpp
// accepts.
Status check_cache_types(const LaunchSettings& settings);

}  // namespace gb10tune::launch
