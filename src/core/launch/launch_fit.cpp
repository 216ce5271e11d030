#include "gb10tune/launch/launch_fit.hpp"

#include "gb10tune/launch/launch_budget.hpp"

namespace gb10tune::launch {

bool fit_runs(const plan::MemoryPlan& plan, std::string_view mode, bool force) {
  return budget_known(plan) && !force && mode != "off" && (mode == "on" || !plan.fits);
}

plan::PlanConfig config_for_knobs(const plan::PlanConfig& base, const plan::FitKnobs& knobs,
                                  bool build_has_kvu, std::string_view kvu_mode) {
  plan::PlanConfig c = base;
  c.slots = knobs.slots;
  c.ctx_total = knobs.ctx_per_slot * knobs.slots;
  c.kv_unified = build_has_kvu && (kvu_mode == "on" || (kvu_mode == "auto" && knobs.slots > 1));
  c.cache_ram_bytes = knobs.cache_ram_bytes;
  return c;
}

plan::FitRequest launch_fit_request(const LaunchSettings& settings, const ServerCommand& command,
                                    const plan::PlanConfig& config, bool build_has_kvu) {
  const std::string mode = settings.text("fit");
  plan::FitRequest request;
  request.asked = {command.ctx_per_slot, command.slots, config.cache_ram_bytes};
  request.priority.clear();
  for (const auto& name : settings.text_list("fit_priority")) {
    request.priority.push_back(*plan::parse_fit_knob(name));  // checked with the profile
  }
  for (const plan::FitKnob knob : plan::kDefaultFitPriority) {
    // auto: only what the command line did not set.
    request.adjustable[static_cast<std::size_t>(knob)] =
        mode == "on" || settings.at(plan::fit_knob_key(knob)).source != "command line";
  }
  if (settings.integer("cache_ram_mib") < 0) {
    request.adjustable[static_cast<std::size_t>(plan::FitKnob::cache_ram)] = false;
  }
  request.configure = [config, build_has_kvu,
                       kvu_mode = settings.text("kv_unified")](const plan::FitKnobs& knobs) {
    return config_for_knobs(config, knobs, build_has_kvu, kvu_mode);
  };
  return request;
}

Expected<LaunchFit> fit_launch(const model::ModelFacts& model, const LaunchSettings& settings,
                               const ServerCommand& command, const plan::PlanConfig& config,
                               const plan::PlanBudget& budget, bool build_has_kvu) {
  LaunchFit out;
  out.summary.mode = settings.text("fit");
  out.summary.priority = settings.text_list("fit_priority");
  const auto fitted =
      plan::fit_plan(model, launch_fit_request(settings, command, config, build_has_kvu), budget);
  if (!fitted) {
    if (fitted.error().code != ExitCode::memory_refused) {
      return fitted.error();
    }
    out.summary.failed = fitted.error().message;
    return out;
  }
  if (fitted->given_up.empty()) {
    return out;
  }
  SettingsLayer layer{"fit (memory)", nlohmann::json::object()};
  for (const plan::FitChange& change : fitted->given_up) {
    const auto name = std::string(plan::fit_knob_key(change.knob));
    out.summary.given_up_from.push_back(settings.at(name).source);
    layer.values[name] =
        change.knob == plan::FitKnob::cache_ram ? change.chosen >> 20 : change.chosen;
  }
  out.summary.given_up = fitted->given_up;
  out.lowered = std::move(layer);
  return out;
}

}  // namespace gb10tune::launch
