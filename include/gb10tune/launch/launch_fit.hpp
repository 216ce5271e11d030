// launch's fit: when the plan does not fit (or --fit), the largest context per slot, slots and
// prompt cache that do, lowered in the profile's fit_priority order (plan/fit.hpp), and only
// what the fit setting lets it lower: with `auto` what the command line did not set, with `on`
// anything, with `off` nothing.
#pragma once

#include <optional>
#include <string_view>

#include "gb10tune/launch/profile.hpp"
#include "gb10tune/launch/server_command.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/fit.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/render/launch_render.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// Whether the fit runs on `plan`: its budget is known, not --force (`force`), the fit setting
// `mode` is not off, and it is on or the plan does not fit.
bool fit_runs(const plan::MemoryPlan& plan, std::string_view mode, bool force);

// The configuration of one choice of knobs: `base` with those slots, context (per slot x
// slots) and prompt cache, and a unified KV pool as the kv_unified setting `kvu_mode` decides
// (on; auto with several slots) when the build has -kvu (`build_has_kvu`).
plan::PlanConfig config_for_knobs(const plan::PlanConfig& base, const plan::FitKnobs& knobs,
                                  bool build_has_kvu, std::string_view kvu_mode);

// The fit request for `command` (built from `settings`, configured as `config`): the asked
// knobs, the priority, what may be lowered, and config_for_knobs as its configuration.
plan::FitRequest launch_fit_request(const LaunchSettings& settings, const ServerCommand& command,
                                    const plan::PlanConfig& config, bool build_has_kvu);

// What the fit did.
struct LaunchFit {
  render::FitSummary summary;
  // The settings it lowered, as the layer above the command line ("fit (memory)", the prompt
  // cache in MiB); nullopt when it lowered nothing.
  std::optional<SettingsLayer> lowered;
};

// Runs the fit (plan::fit_plan) of launch_fit_request against `budget`. Nothing fitting is not
// an Error but summary.failed (the plan is then refused as it is); any other Error of
// fit_plan is returned.
Expected<LaunchFit> fit_launch(const model::ModelFacts& model, const LaunchSettings& settings,
                               const ServerCommand& command, const plan::PlanConfig& config,
                               const plan::PlanBudget& budget, bool build_has_kvu);

}  // namespace gb10tune::launch
