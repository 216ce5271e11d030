#include "gb10tune/launch/launch_files.hpp"

#include <fmt/format.h>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/launch/server_binary.hpp"

namespace gb10tune::launch {

namespace fs = std::filesystem;

namespace {

// A path setting as a path every later reader finds: ~ expanded from `env`, then made absolute
// against this process's working directory (the launch record is read from anywhere).
fs::path absolute_setting_path(const std::string& text, const platform::Environment& env) {
  const fs::path path = expand_home(text, env);
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  return ec ? path : absolute.lexically_normal();
}

}  // namespace

Expected<ModelCandidate> find_launch_model(const LaunchSettings& s,
                                           const platform::Environment& env) {
  if (const auto model = s.text("model"); !model.empty()) {
    return candidate_for_file(absolute_setting_path(model, env));
  }
  const fs::path dir = absolute_setting_path(s.text("models_dir"), env);
  const auto folder = scan_models_folder(dir);
  if (!folder) {
    return folder.error();
  }
  return pick_model(*folder, dir);
}

Expected<model::ModelFacts> read_launch_model(const ModelCandidate& candidate) {
  // Every shard of a split model (split.count in the header), so that the weights and the
  // bytes read per token are the whole model's.
  auto facts = model::read_model(candidate.path);
  if (!facts) {
    return Error{facts.error().message, ExitCode::usage};  // it names the file
  }
  return facts;
}

Expected<std::string> find_launch_projector(const LaunchSettings& s, const fs::path& model,
                                            const platform::Environment& env) {
  const auto mode = s.text("mmproj");
  if (mode == "none") {
    return std::string();
  }
  if (mode != "auto") {
    return absolute_setting_path(mode, env).string();
  }
  const auto folder = scan_models_folder(model.parent_path());
  if (!folder || folder->projectors.empty()) {
    return std::string();
  }
  if (folder->projectors.size() > 1) {
    std::string list;
    for (const auto& p : folder->projectors) {
      list += "\n  " + p.string();
    }
    return Error{fmt::format("{} projector files beside the model; choose one with --mmproj "
                             "FILE, or --no-mmproj:{}",
                             folder->projectors.size(), list),
                 ExitCode::usage};
  }
  return folder->projectors.front().string();
}

Expected<std::optional<model::ProjectorFacts>> read_launch_projector(const std::string& path) {
  if (path.empty()) {
    return std::optional<model::ProjectorFacts>();
  }
  const auto file = gguf::read_gguf(path);
  if (!file) {
    return Error{fmt::format("mmproj {}: {}", path, file.error().message), ExitCode::usage};
  }
  const auto projector = model::describe_projector(*file);
  if (!projector) {
    return Error{projector.error().message, ExitCode::usage};
  }
  return std::optional<model::ProjectorFacts>(*projector);
}

}  // namespace gb10tune::launch
