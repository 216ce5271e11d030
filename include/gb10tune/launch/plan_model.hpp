// The model of a plan before a download (gb10tune plan MODEL): a local file, whole or a
// header-only copy, a split model's first shard, or an http:// URL whose header (and its split
// shards', found from the name pattern) is read with range requests. Only headers are read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gb10tune/http/remote_file.hpp"
#include "gb10tune/launch/model_discovery.hpp"
#include "gb10tune/model/model_facts.hpp"

namespace gb10tune::launch {

// One file of the model as read.
struct PlannedFile {
  std::string name;                // the path or the URL asked for
  std::string found_at;            // the URL after redirects; "" for a local file
  std::uint64_t size = 0;          // the whole file's size
  std::uint64_t header_bytes = 0;  // where its data section begins
  std::uint64_t bytes_read = 0;    // read from the server (remote files); the header locally
  bool header_only = false;        // a local copy without (all of) its tensor data
  bool from_cache = false;         // a remote header found in the cache, still current
  bool whole_file = false;         // read whole: the server ignores Range (a small file)
  std::string cache_problem;       // why it could not be saved to the cache; "" when it was
};

// The model and how it was read.
struct PlanModel {
  ModelCandidate candidate;  // the files as a launch would name them
  model::ModelFacts facts;
  std::vector<PlannedFile> files;
  bool remote = false;

  std::uint64_t total_size() const;
  std::uint64_t total_read() const;
};

// Reads `model` (a path or an http(s):// URL). Local: the Errors of read_model (header-only
// copies accepted) and of candidate_for_file (a later shard given, a missing shard). Remote:
// the Errors of RemoteFile::open and of the header (offset named), each shard's prefixed with
// its URL; `options` bound the whole read (all shards) and name the cache. A header that
// cannot be saved to the cache is not an Error (PlannedFile::cache_problem).
Expected<PlanModel> read_plan_model(const std::string& model, const http::RemoteOptions& options);

// The URLs of a split model's shards from the first one's ("…-00001-of-00003.gguf[?query]"),
// as llama.cpp names shards; an Error when the URL is not named that way for `count` shards.
Expected<std::vector<std::string>> split_shard_urls(const std::string& first, std::uint32_t count);

}  // namespace gb10tune::launch
