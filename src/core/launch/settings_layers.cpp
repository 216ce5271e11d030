#include "gb10tune/launch/settings_layers.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/tune/tuned_profile.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::launch {

namespace {

namespace fs = std::filesystem;

// The user config ($XDG_CONFIG_HOME/gb10tune/config.json); nullopt when there is none.
Expected<std::optional<SettingsDocument>> read_user_config(const platform::Environment& env,
                                                           std::string& path_out) {
  const auto dir = platform::config_dir(env);
  if (!dir) {
    return std::optional<SettingsDocument>{};
  }
  const auto path = *dir / "config.json";
  path_out = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return std::optional<SettingsDocument>{};
  }
  const auto text = read_text_file(path);
  if (!text) {
    return Error{fmt::format("user config {} cannot be read; fix its permissions or remove it",
                             path.string()),
                 ExitCode::usage};
  }
  auto doc = parse_settings_document(*text, path.string());
  if (!doc) {
    return doc.error();
  }
  return std::optional<SettingsDocument>(std::move(*doc));
}

}  // namespace

Expected<SettingsLayers> read_settings_layers(const LaunchRequest& request,
                                              const platform::Environment& env) {
  SettingsLayers layers;
  auto user = read_user_config(env, layers.user_path);
  if (!user) {
    return user.error();
  }
  layers.user = std::move(*user);
  if (platform::config_dir(env)) {
    layers.user_profiles = tune::user_profile_dir(env);
  }
  if (!request.profile.empty()) {
    layers.profile = request.profile;
    layers.profile_reason = "--profile";
  } else if (layers.user && !layers.user->profile.empty()) {
    layers.profile = layers.user->profile;
    layers.profile_reason = "user config";
  }
  return layers;
}

Status load_named_profile(SettingsLayers& layers) {
  if (layers.profile.empty() || layers.profile_settings) {
    return {};
  }
  auto profile = load_profile(layers.profile, layers.user_profiles);
  if (!profile) {
    return profile.error();
  }
  layers.profile_settings = std::move(*profile);
  return {};
}

Status load_launch_profile(SettingsLayers& layers, const model::ModelFacts& model) {
  if (layers.profile.empty()) {
    layers.profile = model.is_moe() ? "gb10-moe" : "gb10-dense-mtp";
    layers.profile_reason = model.is_moe() ? "chosen: the model is a mixture of experts"
                                           : "chosen: the default for dense models";
  }
  return load_named_profile(layers);
}

LaunchSettings resolve_settings(const SettingsLayers& layers, const LaunchRequest& request,
                                const SettingsLayer* fitted) {
  std::vector<SettingsLayer> list;
  if (layers.profile_settings) {
    list.push_back({"profile " + layers.profile, layers.profile_settings->settings});
  }
  if (layers.user) {
    list.push_back({"user config " + layers.user_path, layers.user->settings});
  }
  list.push_back({"command line", request.values});
  if (fitted != nullptr) {
    list.push_back(*fitted);
  }
  return LaunchSettings::resolve(list);
}

Status spread_context_size(LaunchRequest& request, const SettingsLayers& layers) {
  if (request.ctx_size && request.values.contains("ctx_per_slot")) {
    return Error{"give either --ctx-size (all slots) or --ctx-per-slot, not both", ExitCode::usage};
  }
  if (!request.ctx_size) {
    return {};
  }
  // -c counts all slots: spread it over them; -c 0 is the model's native context per slot, as
  // for llama-server.
  const auto slots = resolve_settings(layers, request).integer("slots");
  const std::int64_t total = *request.ctx_size;
  const std::int64_t per_slot = total / slots;
  const std::int64_t max_per_slot = find_setting_spec("ctx_per_slot")->max;
  if (total < 0 || (total > 0 && per_slot == 0) || per_slot > max_per_slot) {
    return Error{
        fmt::format("command line --ctx-size {}: must be 0 (the model's native context "
                    "per slot) or from {} to {} ({} slot{} of 1 to {} tokens)",
                    total, slots, max_per_slot * slots, slots, slots == 1 ? "" : "s", max_per_slot),
        ExitCode::usage};
  }
  request.values["ctx_per_slot"] = per_slot;
  return {};
}

Status check_cache_types(const LaunchSettings& s) {
  for (const auto* key : {"cache_type_k", "cache_type_v"}) {
    if (!plan::parse_cache_type(s.text(key))) {
      return Error{fmt::format("{} '{}' ({}) is not a KV cache type llama.cpp accepts; use f32, "
                               "f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0 or q5_1",
                               key, s.text(key), s.at(key).source),
                   ExitCode::usage};
    }
  }
  return {};
}

}  // namespace gb10tune::launch
