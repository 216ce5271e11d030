#include "gb10tune/launch/launch_config.hpp"

#include "gb10tune/plan/backend_choice.hpp"
#include "gb10tune/plan/calibration_key.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/trust/private_files.hpp"

namespace gb10tune::launch {

namespace {

// The settings and the command as the plan sees them.
plan::PlanConfig plan_config(const LaunchSettings& s, const ServerCommand& cmd,
                             const PlanInputs& inputs) {
  plan::PlanConfig config;
  config.ctx_total = cmd.ctx_total;
  config.slots = cmd.slots;
  config.kv_unified = cmd.kv_unified;
  config.cache_k = *plan::parse_cache_type(s.text("cache_type_k"));
  config.cache_v = *plan::parse_cache_type(s.text("cache_type_v"));
  config.flash_attention = s.text("flash_attn") != "off";
  config.swa_full = s.boolean("swa_full");
  config.ubatch = static_cast<std::uint32_t>(s.integer("ubatch"));
  config.mtp = cmd.mtp;
  config.draft_n_max = cmd.mtp ? cmd.draft_n_max : 3;
  const auto ram = s.integer("cache_ram_mib");
  // -1 (no limit) is planned by plan_unbounded_cache once the cache geometry is known.
  config.cache_ram_bytes = ram < 0 ? 0 : static_cast<std::uint64_t>(ram) << 20;
  config.projector = inputs.projector;
  config.projector_offload = s.boolean("mmproj_offload");
  config.overhead_bytes = inputs.overhead_bytes;
  config.estimate_unsupported = inputs.estimate;
  return config;
}

// The backend decides which compute buffers the server makes (one CPU buffer, or CUDA0 +
// CUDA_Host) and whether the CUDA runtime's memory counts.
plan::BackendChoice backend_of(const ServerCommand& cmd, const PlanInputs& inputs) {
  plan::BackendEvidence evidence;
  evidence.server_has_cuda = inputs.cuda_build.cuda;
  evidence.server_evidence = inputs.cuda_build.evidence;
  evidence.machine_has_gpu = inputs.machine_has_gpu;
  evidence.gpu_layers = cmd.gpu_layers;
  evidence.gpus_hidden = inputs.gpus_hidden;
  plan::BackendChoice choice = plan::choose_backend(evidence);
  if (inputs.backend != "auto") {
    choice.backend = inputs.backend == "cuda" ? plan::PlanBackend::cuda : plan::PlanBackend::cpu;
    choice.reason = "--backend " + inputs.backend + " (detected: " + choice.reason + ")";
  }
  return choice;
}

}  // namespace

LaunchConfig configure_launch(const LaunchSettings& settings, const ServerCommand& command,
                              const model::ModelFacts& model, const PlanInputs& inputs) {
  LaunchConfig out;
  plan::PlanConfig& config = out.config;
  config = plan_config(settings, command, inputs);
  const plan::BackendChoice choice = backend_of(command, inputs);
  config.backend = choice.backend;
  config.backend_reason = choice.reason;
  config.repack = plan::repack_setting(plan::parse_repack_options(command.argv),
                                       inputs.repack_features, inputs.gpu_in_use, inputs.gb10);
  config.gpu_layers = command.gpu_layers;
  config.tensor_split = inputs.placement.tensor_split;
  // -mmdev after --: the projector's GPU, or none (host memory, like --no-mmproj-offload).
  if (inputs.placement.projector_device == "none") {
    config.projector_offload = false;
  } else {
    config.projector_device = inputs.placement.projector_device;
  }
  out.key = plan::calibration_key(model, inputs.build_identity, config, inputs.rpc_workers);
  if (!inputs.estimate && inputs.calibration) {
    if (const auto correction = plan::correction_for(*inputs.calibration, out.key)) {
      config.calibration_bytes = correction->bytes;
      config.calibration_source = correction->source;
    }
    config.calibration_note = plan::unapplied_runs_note(*inputs.calibration, out.key);
  }
  return out;
}

std::optional<plan::CalibrationStore> read_launch_calibration(const platform::Environment& env,
                                                              const NoteSink& note) {
  const auto dir = platform::state_dir(env);
  if (!dir) {
    return std::nullopt;
  }
  if (const Status trusted = trust::check_state_dir(*dir); !trusted) {
    note(NoteKind::warning, trusted.error().message + "; the plan is not calibrated");
    return std::nullopt;
  }
  auto store = plan::read_calibration_store(*dir / "calibration.json");
  if (!store) {
    note(NoteKind::warning, store.error().message + "; the plan is not calibrated");
    return std::nullopt;
  }
  return std::move(*store);
}

}  // namespace gb10tune::launch
