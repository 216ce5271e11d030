#include "gb10tune/launch/launch_planner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/launch/launch_files.hpp"
#include "gb10tune/launch/launch_fit.hpp"
#include "gb10tune/launch/launch_rpc.hpp"
#include "gb10tune/launch/repack_features.hpp"
#include "gb10tune/launch/server_binary.hpp"
#include "gb10tune/plan/backend_choice.hpp"
#include "gb10tune/render/plan_render.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/tune/tuned_profile.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::launch {

namespace {

// What building a command of `draft` needs.
CommandContext command_context(const LaunchDraft& draft, const PlannerContext& context) {
  return {&draft.model, &draft.flags, draft.inputs, draft.rules, context.env, context.sysroot};
}

// The plan inputs found once: the build's backend, repacking, the placement and the calibration.
Expected<PlanInputs> plan_inputs(const LaunchDraft& d, const LaunchSizes& sizes,
                                 const PlannerContext& context) {
  PlanInputs inputs;
  auto placement = plan::parse_placement(d.settings.text_list("extra_args"));
  if (!placement) {
    return placement.error();
  }
  inputs.placement = std::move(*placement);
  inputs.projector = d.projector;
  inputs.overhead_bytes = sizes.overhead;
  const auto* assumed = context.stand_ins != nullptr && context.stand_ins->build
                            ? &*context.stand_ins->build
                            : nullptr;
  inputs.cuda_build = assumed ? assumed->cuda : server::detect_cuda_build(d.server_path);
  inputs.machine_has_gpu = sys::nvidia_gpu_count(context.sysroot) > 0;
  inputs.backend = d.request.backend;
  // CPU repacking (plan/cpu_repack.hpp): a CUDA build with a GPU in use keeps the CPU's
  // weights in the GPU's host buffer; otherwise the build's CPU features decide.
  const auto& devices = inputs.placement.devices;
  inputs.gpus_hidden = plan::gpus_hidden(devices, context.env.get("CUDA_VISIBLE_DEVICES"));
  inputs.gpu_in_use = inputs.cuda_build.cuda && inputs.machine_has_gpu && !inputs.gpus_hidden;
  inputs.repack_features =
      launch_repack_features(context.sysroot, d.server_path, d.model,
                             plan::parse_repack_options(d.built.command.argv), inputs.gpu_in_use);
  inputs.gb10 = d.inputs.gb10;
  inputs.build_identity = assumed ? assumed->label : server_build_identity(d.server_path);
  inputs.rpc_workers = d.endpoints.size();
  // An architecture without layer rules: --force with an explicit --overhead plans an
  // estimate (the weights plus that overhead); anything less is refused by make_plan with the
  // reason.
  inputs.estimate = !d.model.supported && d.request.force;
  if (inputs.estimate && d.settings.at("overhead").source != "command line") {
    return Error{
        fmt::format("{}: {}. --force alone cannot plan it: also give --overhead SIZE, "
                    "what its KV cache, state and compute buffers will need on top of "
                    "the weights ({})",
                    d.model.source, d.model.unsupported_reason, format_bytes(d.model.weight_bytes)),
        ExitCode::usage};
  }
  if (!inputs.estimate) {  // a calibration learned from an estimate would claim more than it knows
    inputs.calibration = read_launch_calibration(context.env, context.note);
  }
  return inputs;
}

// The configuration of the plan's current settings and command.
void reconfigure(LaunchPlan& p) {
  LaunchConfig configured =
      configure_launch(p.draft.settings, p.draft.built.command, p.draft.model, p.inputs);
  p.config = std::move(configured.config);
  p.calibration_key = std::move(configured.key);
}

// The fit, when it runs: lowers what it may, then builds, configures and plans again.
Status apply_fit(LaunchPlan& p, const plan::PlanBudget& budget, const PlannerContext& context) {
  LaunchDraft& d = p.draft;
  if (!fit_runs(p.plan, d.settings.text("fit"), d.request.force)) {
    return {};
  }
  const auto* kvu = d.flags.find("-kvu");
  const bool build_has_kvu = kvu != nullptr && !kvu->removed();
  auto fitted = fit_launch(d.model, d.settings, d.built.command, p.config, budget, build_has_kvu);
  if (!fitted) {
    return fitted.error();
  }
  p.fit = std::move(fitted->summary);
  if (!fitted->lowered) {
    return {};
  }
  d.settings = resolve_settings(d.layers, d.request, &*fitted->lowered);
  auto built = build_launch_command(d.settings, command_context(d, context));
  if (!built) {
    return built.error();
  }
  d.built = std::move(*built);
  reconfigure(p);
  auto plan = plan::make_plan(d.model, p.config, budget);
  if (!plan) {
    return plan.error();
  }
  p.plan = std::move(*plan);
  return {};
}

// The model's files and facts: the stand-ins' when given, else found and read.
Status find_model(LaunchDraft& d, const LaunchRequest& request, const PlannerContext& context) {
  if (context.stand_ins != nullptr) {
    d.candidate = context.stand_ins->candidate;
    d.model = context.stand_ins->model;
    return {};
  }
  auto candidate = find_launch_model(resolve_settings(d.layers, request), context.env);
  if (!candidate) {
    return candidate.error();
  }
  d.candidate = std::move(*candidate);
  auto model = read_launch_model(d.candidate);
  if (!model) {
    return model.error();
  }
  d.model = std::move(*model);
  return {};
}

// The server binary and its flags: the assumed build's when given, else found and asked.
Status find_server(LaunchDraft& d, const PlannerContext& context) {
  if (context.stand_ins != nullptr && context.stand_ins->build) {
    d.server_path = context.stand_ins->build->label;
    d.flags = context.stand_ins->build->flags;
    return {};
  }
  auto server_path = resolve_server_binary(d.settings.text("llama_server"), context.env);
  if (!server_path) {
    return server_path.error();
  }
  d.server_path = std::move(*server_path);
  auto flags = server::read_server_flags(d.server_path);
  if (!flags) {
    return flags.error();
  }
  d.flags = std::move(*flags);
  return {};
}

}  // namespace

Expected<LaunchDraft> draft_launch(LaunchRequest request, const PlannerContext& context) {
  LaunchDraft d;
  auto endpoints = normalize_request(request, context.env, context.note);
  if (!endpoints) {
    return endpoints.error();
  }
  d.endpoints = std::move(*endpoints);
  auto layers = read_settings_layers(request, context.env);
  if (!layers) {
    return layers.error();
  }
  d.layers = std::move(*layers);
  // A named profile first: a tuned one names its model (the shipped ones do not).
  if (auto named = load_named_profile(d.layers); !named) {
    return named.error();
  }
  if (auto shadowed = shadowed_profile_note(d.layers.profile, d.layers.user_profiles)) {
    context.note(NoteKind::warning, *shadowed);
  }
  // Find the model with the settings known so far.
  if (Status found = find_model(d, request, context); !found) {
    return found.error();
  }
  if (auto loaded = load_launch_profile(d.layers, d.model); !loaded) {
    return loaded.error();
  }
  if (auto spread = spread_context_size(request, d.layers); !spread) {
    return spread.error();
  }
  d.settings = resolve_settings(d.layers, request);
  if (auto ok = check_cache_types(d.settings); !ok) {
    return ok.error();
  }
  auto mmproj = find_launch_projector(d.settings, d.candidate.path, context.env);
  if (!mmproj) {
    return mmproj.error();
  }
  d.mmproj_path = std::move(*mmproj);
  auto projector = read_launch_projector(d.mmproj_path);
  if (!projector) {
    return projector.error();
  }
  d.projector = std::move(*projector);
  if (Status found = find_server(d, context); !found) {
    return found.error();
  }
  if (const auto* rpc_flag = d.flags.find("--rpc");
      !d.endpoints.empty() && (rpc_flag == nullptr || rpc_flag->removed())) {
    return Error{fmt::format("{} has no --rpc option: it was built without llama.cpp's RPC "
                             "backend; rebuild it with -DGGML_RPC=ON (and the workers' rpc-server "
                             "from the same commit)",
                             d.server_path),
                 ExitCode::usage};
  }
  d.inputs.server_path = d.server_path;
  d.inputs.model_path = d.candidate.path.string();
  d.inputs.mmproj_path = d.mmproj_path;
  d.inputs.gb10 = sys::is_gb10_machine(context.sysroot);
  d.inputs.force = request.force;
  d.rules = {d.model.has_mtp(), d.model.main_layer_count, d.inputs.gb10};
  // A tuned profile's measurements outrank the rules they contradict, on its model and build.
  if (d.layers.profile_settings) {
    if (const auto tuned = tune::tuned_for_from_json(d.layers.profile_settings->tuned)) {
      d.rules.measured = tune::measured_settings(*tuned, d.layers.profile, d.inputs.model_path,
                                                 server_build_identity(d.server_path));
    }
  }
  d.request = std::move(request);
  auto built = build_launch_command(d.settings, command_context(d, context));
  if (!built) {
    return built.error();
  }
  d.built = std::move(*built);
  return d;
}

Expected<LaunchPlan> plan_launch(LaunchDraft draft, const PlannerContext& context,
                                 bool contact_workers) {
  LaunchPlan p;
  p.draft = std::move(draft);
  const LaunchDraft& d = p.draft;
  auto sizes = read_launch_sizes(d.settings);
  if (!sizes) {
    return sizes.error();
  }
  p.sizes = *sizes;
  auto inputs = plan_inputs(d, p.sizes, context);
  if (!inputs) {
    return inputs.error();
  }
  p.inputs = std::move(*inputs);
  reconfigure(p);
  auto budget = launch_budget(p.config, p.sizes, p.inputs.placement, context.sysroot, context.gpu,
                              context.note);
  if (!budget) {
    return budget.error();
  }
  if (context.freed_bytes > 0 && budget->mem_available) {
    *budget->mem_available += context.freed_bytes;
    context.note(NoteKind::info,
                 fmt::format("MemAvailable counts the {} the running server gives back when it "
                             "stops",
                             format_bytes(context.freed_bytes)));
  }
  std::optional<HeadBudget> head;
  if (!d.endpoints.empty()) {
    head = take_head_budget(*budget, p.config, d.inputs.gb10);
  }
  p.budget = *budget;
  auto plan = make_launch_plan(d.model, p.config, *budget, d.settings, d.inputs.gb10);
  if (!plan) {
    return plan.error();
  }
  p.plan = std::move(*plan);
  if (auto fitted = apply_fit(p, *budget, context); !fitted) {
    return fitted.error();
  }
  const bool described = context.stand_ins != nullptr && context.stand_ins->workers;
  if (!head || (!contact_workers && !described)) {
    return p;
  }
  auto workers = described ? Expected<std::vector<rpc::WorkerInfo>>(*context.stand_ins->workers)
                           : launch::contact_workers(d.endpoints, rpc::kKnownVersion,
                                                     workers_in_use(context.env, context.sysroot),
                                                     context.note);
  if (!workers) {
    return workers.error();
  }
  p.rpc =
      plan_rpc_launch(d.model, p.config, p.plan, std::move(*workers), *head, p.sizes, d.endpoints);
  if (!p.rpc->nodes.budgets_known) {
    context.note(NoteKind::warning, "a node's memory is unknown; the plan per node is not checked");
  }
  return p;
}

render::LaunchPreview preview_of(const LaunchPlan& p) {
  render::LaunchPreview preview;
  preview.model = &p.draft.model;
  for (const auto& shard : p.draft.candidate.shards) {
    preview.model_files.push_back(shard.string());
  }
  preview.mmproj_path = p.draft.mmproj_path;
  preview.projector_bytes = p.plan.projector_bytes + p.plan.projector_compute_bytes;
  preview.server_path = p.draft.server_path;
  preview.profile = p.draft.layers.profile;
  preview.profile_reason = p.draft.layers.profile_reason;
  preview.settings = &p.draft.settings;
  preview.command = &p.draft.built.command;
  preview.config = &p.config;
  preview.plan = &p.plan;
  preview.environment = &p.draft.built.environment;
  preview.rules = &p.draft.built.rules;
  preview.fit = p.fit ? &*p.fit : nullptr;
  preview.calibration_key = p.calibration_key;
  preview.rpc = p.rpc ? &*p.rpc : nullptr;
  return preview;
}

std::optional<std::string> start_refusal(const LaunchPlan& p) {
  const bool checked = p.rpc ? p.rpc->nodes.budgets_known : budget_known(p.plan);
  const bool fits = p.rpc ? p.rpc->nodes.fits : p.plan.fits;
  if (!checked || fits || p.draft.request.force) {
    return std::nullopt;
  }
  if (p.rpc) {
    return "the plan does not fit on every node; nothing was started. " +
           render::rpc_refusal(p.rpc->nodes) + " (--force starts it anyway)";
  }
  return "the plan does not fit in memory; nothing was started. " +
         render::what_fits(p.config, p.plan) + " (--force starts it anyway)";
}

Status check_export(const LaunchPlan& p) {
  if (p.draft.endpoints.empty() && budget_known(p.plan) && !p.plan.fits && !p.draft.request.force) {
    return Error{"the plan does not fit in memory; nothing was printed. " +
                     render::what_fits(p.config, p.plan) + " (--force prints it anyway)",
                 ExitCode::memory_refused};
  }
  return {};
}

ExportInputs export_inputs(const LaunchPlan& p) {
  return {p.draft.candidate.path, &p.draft.built,      &p.draft.flags,
          p.draft.endpoints,      p.draft.request.rpc, {}};
}

}  // namespace gb10tune::launch
