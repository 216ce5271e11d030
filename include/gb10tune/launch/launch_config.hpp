// A launch's memory-plan configuration: the settings and the command as the plan sees them
// (context, slots, cache types, the projector), the backend whose buffers it sizes, CPU
// repacking, the layer placement, and the calibration learned for the same model, build and
// shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "gb10tune/launch/launch_request.hpp"
#include "gb10tune/launch/profile.hpp"
#include "gb10tune/launch/server_command.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/calibration.hpp"
#include "gb10tune/plan/cpu_repack.hpp"
#include "gb10tune/plan/device_plan.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/server/server_build.hpp"

namespace gb10tune::launch {

// What the configuration depends on besides the settings and the command: found once per
// launch.
struct PlanInputs {
  std::optional<model::ProjectorFacts> projector;  // nullopt: no projector
  std::uint64_t overhead_bytes = plan::kDefaultOverheadBytes;
  // An architecture without layer rules, planned as an estimate (--force --overhead): its
  // plan is not calibrated, since a correction learned from an estimate claims too much.
  bool estimate = false;
  server::CudaBuildFacts cuda_build;  // the llama-server build's backend
  bool machine_has_gpu = false;       // the NVIDIA driver lists a GPU here
  std::string backend = "auto";       // --backend: auto, cpu or cuda
  plan::RepackFeatures repack_features;
  bool gpu_in_use = false;  // a CUDA build with a GPU here, not --device none
  // --device none, or CUDA_VISIBLE_DEVICES set and empty: llama-server sees no GPU
  bool gpus_hidden = false;
  bool gb10 = false;
  plan::LayerPlacement placement;  // from the extra arguments
  std::string build_identity;      // the calibration key's build
  std::size_t rpc_workers = 0;
  std::optional<plan::CalibrationStore> calibration;  // nullopt: none to apply
};

// A configuration and the key a measurement of its server is recorded for.
struct LaunchConfig {
  plan::PlanConfig config;
  plan::CalibrationKey key;
};

// The configuration of `command` (built from `settings`) for `model`. Never fails: the settings
// were checked (cache types by check_cache_types).
LaunchConfig configure_launch(const LaunchSettings& settings, const ServerCommand& command,
                              const model::ModelFacts& model, const PlanInputs& inputs);

// The calibration store of the state directory; nullopt when there is none. A state directory
// that may not be believed, or a store that cannot be read, is a warning to `note`: the plan is
// then not calibrated.
std::optional<plan::CalibrationStore> read_launch_calibration(const platform::Environment& env,
                                                              const NoteSink& note);

}  // namespace gb10tune::launch
