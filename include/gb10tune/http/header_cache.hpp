// The cache of remote files' first bytes (their GGUF headers), so that planning the same model
// again costs one small request: one file per URL under the cache directory
// ($XDG_CACHE_HOME/gb10tune/headers/), holding the URL, the file's size and validator (ETag or
// Last-Modified) and the bytes. An entry is used only when the server still reports the same
// size and validator; a file without a validator is never cached.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::http {

// One cached prefix of a remote file.
struct CachedPrefix {
  std::string url;  // as asked for
  std::uint64_t size = 0;
  std::string validator;
  std::string bytes;  // the file's first bytes
};

// The file that holds `url`'s entry under `dir`.
std::filesystem::path cache_entry_path(const std::filesystem::path& dir, const std::string& url);

// The entry for `url` under `dir`; nullopt when there is none, or it is unreadable, damaged or
// for another URL (a damaged entry is simply fetched again).
std::optional<CachedPrefix> load_cached_prefix(const std::filesystem::path& dir,
                                               const std::string& url);

// Saves `entry` under `dir` (made private if needed, the file replaced atomically). An Error
// naming the file when it cannot be written; nothing for an entry without a validator.
Status save_cached_prefix(const std::filesystem::path& dir, const CachedPrefix& entry);

}  // namespace gb10tune::http
