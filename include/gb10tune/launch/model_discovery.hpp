// Finding the model in the models folder, the way the hand-written start script did (K14):
// the one main *.gguf (projectors excluded, a split model counted once) and at most one
// *mmproj*.gguf.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// A model in the folder: one file, or the shards of a split model.
struct ModelCandidate {
  std::filesystem::path path;                 // the file to pass to -m (the first shard)
  std::vector<std::filesystem::path> shards;  // all files, first included; one for a plain file
  std::uint64_t bytes = 0;                    // sum of the files' sizes
};

// What the folder holds.
struct ModelFolder {
  std::vector<ModelCandidate> models;             // sorted by name
  std::vector<std::filesystem::path> projectors;  // *mmproj*.gguf, sorted
};

// True for a projector file name ("mmproj" anywhere in it, any case).
bool is_projector_name(const std::string& file_name);

// Lists `dir` (not recursively). Split files "<name>-00001-of-00003.gguf" form one candidate;
// a split with a missing or extra shard is an Error naming the files. An Error when the
// folder cannot be read.
Expected<ModelFolder> scan_models_folder(const std::filesystem::path& dir);

// The one model of the folder: an Error with exit code usage listing the candidates (or
// saying there are none) and how to choose (--model PATH) otherwise.
Expected<ModelCandidate> pick_model(const ModelFolder& folder, const std::filesystem::path& dir);

// The shards of `model` when it is the first file of a split model, else just `model`; an
// Error naming the missing shard.
Expected<ModelCandidate> candidate_for_file(const std::filesystem::path& model);

}  // namespace gb10tune::launch
