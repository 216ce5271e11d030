#include "gb10tune/launch/model_discovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <system_error>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::launch {

namespace fs = std::filesystem;

namespace {

// "<stem>-00001-of-00003.gguf" → stem, index 1, count 3.
struct SplitName {
  std::string stem;
  unsigned index = 0;
  unsigned count = 0;
};

std::optional<SplitName> parse_split_name(const std::string& name) {
  static const std::regex pattern(R"(^(.*)-([0-9]{5})-of-([0-9]{5})\.gguf$)");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) {
    return std::nullopt;
  }
  return SplitName{m[1].str(), static_cast<unsigned>(std::stoul(m[2].str())),
                   static_cast<unsigned>(std::stoul(m[3].str()))};
}

std::string lower(std::string text) {
  for (auto& c : text) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return text;
}

std::uint64_t size_of(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

std::string shard_name(const SplitName& split, unsigned index) {
  return fmt::format("{}-{:05}-of-{:05}.gguf", split.stem, index, split.count);
}

}  // namespace

bool is_projector_name(const std::string& file_name) {
  return lower(file_name).find("mmproj") != std::string::npos;
}

Expected<ModelCandidate> candidate_for_file(const fs::path& model) {
  ModelCandidate candidate{model, {model}, size_of(model)};
  const auto split = parse_split_name(model.filename().string());
  if (!split || split->count <= 1) {
    return candidate;
  }
  if (split->index != 1) {
    return Error{
        fmt::format("{} is shard {} of a split model; give the first shard, {}", model.string(),
                    split->index, (model.parent_path() / shard_name(*split, 1)).string()),
        ExitCode::usage};
  }
  for (unsigned i = 2; i <= split->count; ++i) {
    const auto shard = model.parent_path() / shard_name(*split, i);
    std::error_code ec;
    if (!fs::is_regular_file(shard, ec)) {
      return Error{fmt::format("split model {}: shard {} of {} is missing ({}); download it or "
                               "remove the partial model",
                               model.string(), i, split->count, shard.string()),
                   ExitCode::usage};
    }
    candidate.shards.push_back(shard);
    candidate.bytes += size_of(shard);
  }
  return candidate;
}

Expected<ModelFolder> scan_models_folder(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    return Error{fmt::format("models folder {}: {}; create it and put the model's .gguf file "
                             "there, or give --models-dir DIR or --model FILE",
                             dir.string(), ec.message()),
                 ExitCode::usage};
  }
  ModelFolder folder;
  std::map<std::string, std::vector<std::pair<SplitName, fs::path>>> splits;
  for (const auto& entry : it) {
    const auto name = entry.path().filename().string();
    if (lower(entry.path().extension().string()) != ".gguf" || !entry.is_regular_file(ec)) {
      continue;
    }
    if (is_projector_name(name)) {
      folder.projectors.push_back(entry.path());
    } else if (const auto split = parse_split_name(name); split && split->count > 1) {
      splits[split->stem + "/" + std::to_string(split->count)].emplace_back(*split, entry.path());
    } else {
      folder.models.push_back({entry.path(), {entry.path()}, size_of(entry.path())});
    }
  }
  for (auto& [key, shards] : splits) {
    std::sort(shards.begin(), shards.end(),
              [](const auto& a, const auto& b) { return a.first.index < b.first.index; });
    const auto& first = shards.front();
    if (first.first.index != 1) {
      return Error{fmt::format("split model {} in {} has no first shard ({})", first.first.stem,
                               dir.string(), shard_name(first.first, 1)),
                   ExitCode::usage};
    }
    auto candidate = candidate_for_file(first.second);
    if (!candidate) {
      return candidate.error();
    }
    folder.models.push_back(std::move(*candidate));
  }
  std::sort(folder.models.begin(), folder.models.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  std::sort(folder.projectors.begin(), folder.projectors.end());
  return folder;
}

Expected<ModelCandidate> pick_model(const ModelFolder& folder, const fs::path& dir) {
  if (folder.models.size() == 1) {
    return folder.models.front();
  }
  if (folder.models.empty()) {
    return Error{fmt::format("no model in {}: it holds no .gguf file other than projectors; put "
                             "the model there or give --model FILE",
                             dir.string()),
                 ExitCode::usage};
  }
  std::string list;
  for (const auto& model : folder.models) {
    list += fmt::format(
        "\n  {}  ({}{})", model.path.string(), format_bytes_si(model.bytes),
        model.shards.size() > 1 ? fmt::format(", {} shards", model.shards.size()) : std::string());
  }
  return Error{fmt::format("{} models in {}; choose one with --model FILE:{}", folder.models.size(),
                           dir.string(), list),
               ExitCode::usage};
}

}  // namespace gb10tune::launch
