// The CPU features launch's memory plan repacks weights with (plan/cpu_repack.hpp): gathered
// here because asking the llama-server build means running it.
#pragma once

#include <string>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/cpu_repack.hpp"
#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::launch {

// The features to plan with: this CPU's (read under `root`: the most a build here can use) when
// no weight of `model` could be repacked with them, or the command keeps the CPU's weights out
// of the repack buffer anyway; otherwise the build's own system_info line, from running
// `server_path -lv 4` on a missing model; when that fails, this CPU's again, saying why.
// Never fails: unknown features make the plan take the safe side.
plan::RepackFeatures launch_repack_features(const platform::Sysroot& root,
                                            const std::string& server_path,
                                            const model::ModelFacts& model,
                                            const plan::RepackOptions& options, bool gpu_in_use);

}  // namespace gb10tune::launch
