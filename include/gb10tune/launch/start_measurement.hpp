// A started launch measured once it is ready: its memory against the plan, recorded as a
// calibration run when it is one to learn from (plan/start_check.hpp, plan/calibration.hpp).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/render/launch_render.hpp"

namespace gb10tune::launch {

// The ready server measured against its plan.
struct StartMeasurement {
  nlohmann::json doc;  // launch --json's "calibration"
  std::string line;    // the one-line summary
};

// Measures process `pid` once its memory stops changing (at most 3 s): against the plan
// (plan::check_started_server decides; a CUDA plan also reads NVML from `gpu`) and, with a
// start check to learn from, records the run in calibration.json of the state directory of
// `env` at `now`. Over RPC each node's plan against the buffers the head's log (`log`, the text
// after this start's header) names for it, and nothing is recorded. Never fails: what cannot
// be measured or recorded is said in the result.
StartMeasurement measure_started_server(const render::LaunchPreview& preview, int pid,
                                        gpu::GpuBackend* gpu, const platform::Environment& env,
                                        const std::filesystem::path& log, const std::string& now);

}  // namespace gb10tune::launch
