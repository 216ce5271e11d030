// The files a launch serves: the model (named, or the one of the models folder, K14), its
// projector (named, none, or the one beside it) and what each holds.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "gb10tune/launch/model_discovery.hpp"
#include "gb10tune/launch/profile.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// The model's files: the "model" setting, else the one model of the "models_dir" folder (~
// expanded from `env`, a relative path made absolute: the record is read from anywhere). The
// Errors of candidate_for_file, scan_models_folder and pick_model.
Expected<ModelCandidate> find_launch_model(const LaunchSettings& settings,
                                           const platform::Environment& env);

// The model as the plan sees it: every shard's weights. A usage Error naming the file.
Expected<model::ModelFacts> read_launch_model(const ModelCandidate& candidate);

// The projector's path: "" for "mmproj" none (or auto with none beside the model), the path
// given (made absolute), or the one *mmproj*.gguf beside `model`. A usage Error listing them when
// there are several.
Expected<std::string> find_launch_projector(const LaunchSettings& settings,
                                            const std::filesystem::path& model,
                                            const platform::Environment& env);

// What the projector at `path` holds; nullopt for "" (none). A usage Error naming the file when
// it is not a GGUF projector.
Expected<std::optional<model::ProjectorFacts>> read_launch_projector(const std::string& path);

}  // namespace gb10tune::launch
