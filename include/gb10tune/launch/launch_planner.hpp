// The launch planner: from what the command line asked to the command a launch runs and the
// plan it is checked against, every decision in order: the settings' layers, the model and its
// projector, the server's --help flags, the command and its clean environment, the budgets, the
// memory plan, the fit, the workers over RPC, and what is refused. It prints nothing: what it
// goes on past goes to a NoteSink, and render/launch_render.hpp renders the result.
//
// Two steps, so that a start can take the launch lock between them: draft_launch finds
// everything the memory check does not depend on; plan_launch checks memory.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/launch/built_command.hpp"
#include "gb10tune/launch/launch_budget.hpp"
#include "gb10tune/launch/launch_config.hpp"
#include "gb10tune/launch/launch_export.hpp"
#include "gb10tune/launch/launch_request.hpp"
#include "gb10tune/launch/model_discovery.hpp"
#include "gb10tune/launch/settings_layers.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/render/launch_render.hpp"
#include "gb10tune/render/node_plan_render.hpp"
#include "gb10tune/server/server_build.hpp"

namespace gb10tune::launch {

// What a plan made before a download (gb10tune plan) gives in place of the files a launch
// reads: the model's header, read already (perhaps remotely, perhaps header-only), and the
// flag set of a named llama-server build instead of a binary's --help.
struct PlanStandIns {
  ModelCandidate candidate;  // the model as a launch would pass it (-m)
  model::ModelFacts model;
  // The assumed build, when no binary is given (nullopt: the llama_server setting's binary is
  // found and asked, as a launch does): its flags, the label that stands for the binary in the
  // plan, and its backend.
  struct Build {
    server::ServerFlags flags;
    std::string label;
    server::CudaBuildFacts cuda;
  };
  std::optional<Build> build;
  // The RPC workers' answers (a described pair of machines), used in place of asking workers
  // that do not exist: with them, plan_launch plans per node whatever `contact_workers` says.
  std::optional<std::vector<rpc::WorkerInfo>> workers;
};

// What the planner may look at.
struct PlannerContext {
  platform::Environment env;       // the caller's: settings, state and config directories
  platform::Sysroot sysroot;       // /proc, /sys and config.ini files are read under it
  gpu::GpuBackend* gpu = nullptr;  // the GPUs a CUDA plan is checked against; nullptr: none
  NoteSink note;                   // must be set
  // Host memory a running server of ours gives back before this start (tune replaces its
  // server): added to MemAvailable, and a note says so. 0 for a launch.
  std::uint64_t freed_bytes = 0;
  const PlanStandIns* stand_ins = nullptr;  // set: no model file or binary is read
};

// Everything a launch finds before its memory check.
struct LaunchDraft {
  LaunchRequest request;                 // as normalize_request left it
  std::vector<rpc::Endpoint> endpoints;  // the RPC workers; empty on one machine
  SettingsLayers layers;
  LaunchSettings settings;
  ModelCandidate candidate;
  model::ModelFacts model;
  std::string mmproj_path;  // "" = none
  std::optional<model::ProjectorFacts> projector;
  std::string server_path;
  server::ServerFlags flags;
  CommandInputs inputs;
  server::RuleInput rules;
  BuiltCommand built;
};

// The whole plan.
struct LaunchPlan {
  LaunchDraft draft;  // its settings and command are the fitted ones after a fit
  LaunchSizes sizes;
  PlanInputs inputs;
  plan::PlanConfig config;
  plan::CalibrationKey calibration_key;  // the triple a measurement of this server is for
  plan::MemoryPlan plan;
  plan::PlanBudget budget;                // what the plan was checked against (the head's with RPC)
  std::optional<render::FitSummary> fit;  // nullopt: the fit did not run
  std::optional<render::RpcPreview> rpc;  // the workers and the plan per node; nullopt: none
};

// Normalizes `request` (normalize_request), reads the settings' layers, finds and reads the
// model and its projector, loads the profile, reads the server's --help and builds the command
// with its environment and verdict. The Errors of each step, in that order (a missing --rpc in
// the build is a usage Error).
Expected<LaunchDraft> draft_launch(LaunchRequest request, const PlannerContext& context);

// Plans `draft`: the sizes, the layer placement, the backend and repacking, the budgets, the
// plan, the fit (which may lower settings and rebuild the command), and with `contact_workers`
// the RPC workers and the plan per node (the stand-ins' workers without asking, when given). An
// architecture without layer rules is a usage Error unless --force with an explicit --overhead. The
// Errors of each step; a plan that does not fit is not one (see refusal).
Expected<LaunchPlan> plan_launch(LaunchDraft draft, const PlannerContext& context,
                                 bool contact_workers);

// The preview of `plan` for rendering; it points into `plan`, which must outlive it.
render::LaunchPreview preview_of(const LaunchPlan& plan);

// Why a start of `plan` is refused (its budget, or each node's, is known, it does not fit and
// not --force): one sentence naming what fits; nullopt when it is not.
std::optional<std::string> start_refusal(const LaunchPlan& plan);

// The same for --print (nothing is started): an Error (memory refused) when the one-machine
// plan does not fit; workers are not contacted for an export, so a plan per node is not
// checked.
Status check_export(const LaunchPlan& plan);

// What --print renders for `plan`.
ExportInputs export_inputs(const LaunchPlan& plan);

}  // namespace gb10tune::launch
