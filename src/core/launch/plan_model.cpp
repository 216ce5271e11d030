// Reading the model of a plan before a download: local files through read_model (header-only
// copies accepted), remote ones through RemoteFile, shards found from the first one's name.
#include "gb10tune/launch/plan_model.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <numeric>

namespace gb10tune::launch {

namespace {

namespace fs = std::filesystem;

// The first range asked of a split model's later shards (no vocabulary, a few hundred tensor
// infos at most).
constexpr std::uint64_t kShardFirstBytes = 256 * 1024;

PlannedFile planned_file(const std::string& name, const gguf::GgufFile& file) {
  PlannedFile planned;
  planned.name = name;
  planned.size = file.file_size();
  planned.header_bytes = file.data_offset();
  planned.bytes_read = file.data_offset();
  planned.header_only = file.header_only();
  return planned;
}

Expected<PlanModel> read_local(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  auto candidate = candidate_for_file(ec ? fs::path(path) : absolute);
  if (!candidate) {
    return candidate.error();
  }
  auto facts = model::read_model(candidate->path, gguf::Completeness::header_only);
  if (!facts) {
    return Error{facts.error().message, ExitCode::usage};
  }
  PlanModel out;
  out.candidate = std::move(*candidate);
  out.facts = std::move(*facts);
  out.candidate.bytes = 0;
  for (const fs::path& shard : out.candidate.shards) {
    auto file = gguf::read_gguf(shard, gguf::Completeness::header_only);
    if (!file) {
      return Error{file.error().message, ExitCode::usage};
    }
    out.files.push_back(planned_file(shard.string(), *file));
    out.candidate.bytes += file->file_size();
  }
  return out;
}

// The header of the remote file at `url`, and how much of it was read.
Expected<std::pair<gguf::GgufFile, PlannedFile>> read_remote_file(
    const std::string& url, const http::RemoteOptions& options) {
  auto remote = http::RemoteFile::open(url, options);
  if (!remote) {
    return remote.error();
  }
  auto file = gguf::read_gguf(*remote, url);
  if (!file) {
    return file.error();
  }
  PlannedFile planned = planned_file(url, *file);
  planned.found_at = remote->url() == url ? "" : remote->url();
  planned.bytes_read = remote->downloaded();
  planned.from_cache = remote->from_cache();
  planned.whole_file = remote->whole_file();
  if (Status saved = remote->save_to_cache(); !saved) {
    planned.cache_problem = saved.error().message;
  }
  return std::pair{std::move(*file), std::move(planned)};
}

Expected<PlanModel> read_remote(const std::string& url, const http::RemoteOptions& options) {
  auto first = read_remote_file(url, options);
  if (!first) {
    return first.error();
  }
  PlanModel out;
  out.remote = true;
  out.files.push_back(first->second);
  const auto count = first->first.get_uint_or("split.count", 1);
  if (!count) {
    return count.error();
  }
  std::vector<gguf::GgufFile> others;
  std::vector<std::string> urls{url};
  if (*count > 1) {
    auto shard_urls =
        split_shard_urls(url, static_cast<std::uint32_t>(std::min<std::uint64_t>(*count, 0xffffu)));
    if (!shard_urls) {
      return shard_urls.error();
    }
    urls = std::move(*shard_urls);
    // The other shards' headers hold tensor infos only: a smaller first range.
    http::RemoteOptions shard_options = options;
    shard_options.limits.first_bytes = std::min(options.limits.first_bytes, kShardFirstBytes);
    for (std::size_t i = 1; i < urls.size(); ++i) {
      auto shard = read_remote_file(urls[i], shard_options);
      if (!shard) {
        return Error{fmt::format("split model {}: shard {} of {}: {}", url, i + 1, urls.size(),
                                 shard.error().message),
                     shard.error().code};
      }
      out.files.push_back(shard->second);
      others.push_back(std::move(shard->first));
    }
  }
  auto facts = *count > 1 ? model::describe_split_model(first->first, others)
                          : model::describe_model(first->first);
  if (!facts) {
    return facts.error();
  }
  out.facts = std::move(*facts);
  out.candidate.path = url;
  for (std::size_t i = 0; i < urls.size(); ++i) {
    out.candidate.shards.emplace_back(urls[i]);
    out.candidate.bytes += out.files[i].size;
  }
  return out;
}

}  // namespace

std::uint64_t PlanModel::total_size() const {
  return std::accumulate(files.begin(), files.end(), std::uint64_t{0},
                         [](std::uint64_t sum, const PlannedFile& f) { return sum + f.size; });
}

std::uint64_t PlanModel::total_read() const {
  return std::accumulate(
      files.begin(), files.end(), std::uint64_t{0},
      [](std::uint64_t sum, const PlannedFile& f) { return sum + f.bytes_read; });
}

Expected<std::vector<std::string>> split_shard_urls(const std::string& first, std::uint32_t count) {
  const auto query_at = first.find('?');
  const std::string query = query_at == std::string::npos ? "" : first.substr(query_at);
  auto paths = model::split_shard_paths(fs::path(first.substr(0, query_at)), count);
  if (!paths) {
    return paths.error();
  }
  std::vector<std::string> urls;
  for (const fs::path& path : *paths) {
    urls.push_back(path.string() + query);
  }
  return urls;
}

Expected<PlanModel> read_plan_model(const std::string& model, const http::RemoteOptions& options) {
  return http::is_remote_url(model) ? read_remote(model, options) : read_local(model);
}

}  // namespace gb10tune::launch
