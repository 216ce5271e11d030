// Rendering what `launch` is about to do: the model, the settings and their sources, the
// memory plan, the environment changes and the exact command (text or one JSON document).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gb10tune/launch/child_environment.hpp"
#include "gb10tune/launch/profile.hpp"
#include "gb10tune/launch/rule_verdict.hpp"
#include "gb10tune/launch/server_command.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/calibration.hpp"
#include "gb10tune/plan/fit.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/render/node_plan_render.hpp"

namespace gb10tune::render {

// What the fit did to the settings.
struct FitSummary {
  std::string mode;                        // the fit setting: "auto" or "on"
  std::vector<std::string> priority;       // fit_priority, most important first
  std::vector<plan::FitChange> given_up;   // what was lowered, in priority order
  std::vector<std::string> given_up_from;  // where each lowered value came from
  std::string failed;                      // why nothing fits; "" when the fit succeeded
};

// Everything launch decided, by reference; all pointers are set.
struct LaunchPreview {
  const model::ModelFacts* model = nullptr;
  std::vector<std::string> model_files;  // the model's file(s): one, or the shards
  std::string mmproj_path;               // "" = none
  std::uint64_t projector_bytes = 0;     // the projector's weights + compute buffer
  std::string server_path;
  std::string profile;         // "gb10-dense-mtp", or a path
  std::string profile_reason;  // "--profile", "user config", "the model is a mixture of experts"
  const launch::LaunchSettings* settings = nullptr;
  const launch::ServerCommand* command = nullptr;
  const plan::PlanConfig* config = nullptr;
  const plan::MemoryPlan* plan = nullptr;
  const launch::ChildEnvironment* environment = nullptr;
  const launch::RuleVerdict* rules = nullptr;  // the tuning rules on the command, as verify
                                               // will judge the started server
  const FitSummary* fit = nullptr;             // nullptr: the fit did not run
  // The triple a measurement of this server is recorded for.
  plan::CalibrationKey calibration_key;
  // With --rpc: the workers and the plan per node (nullptr: one machine).
  const RpcPreview* rpc = nullptr;
};

// "ctx_per_slot 196608 → 65536 (profile gb10-dense-mtp)", one entry per lowered setting.
std::vector<std::string> describe_fit_changes(const FitSummary& fit);

// One line per tuning rule a tuned profile's measurement passes (server::Finding::measured):
// "flash attention on [K9]: flash_attn off: measured by gb10tune tune on …".
std::vector<std::string> launch_measured(const launch::RuleVerdict& rules);

// Every warning of a launch: the command's (refusals passed with --force), the environment's
// (unread config files, unknown variables), then one per tuning rule the command does not pass.
std::vector<std::string> launch_warnings(const launch::ServerCommand& command,
                                         const launch::ChildEnvironment& environment,
                                         const launch::RuleVerdict& rules);

// The launch document (the envelope and plan of plan_to_json, plus model files, profile,
// settings with their sources, environment changes, command_line (argv, shell text, pieces
// by rule), adaptations, warnings, and `rules`: each tuning rule's finding as verify will show
// it, with what launch did about it under "launch").
nlohmann::json launch_to_json(const LaunchPreview& preview);

// The text: a header, the memory plan, environment changes, adaptations, warnings and the
// shell-quoted command; with `explain`, also every setting's source and every option's rule.
std::string render_launch_text(const LaunchPreview& preview, const TextStyle& style, bool explain);

}  // namespace gb10tune::render
