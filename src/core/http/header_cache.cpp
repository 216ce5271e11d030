// The header cache's files: one JSON line (url, size, validator, length) then the bytes.
#include "gb10tune/http/header_cache.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::http {

namespace {

// FNV-1a of `text`: a stable file name for a URL.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : text) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

std::filesystem::path cache_entry_path(const std::filesystem::path& dir, const std::string& url) {
  return dir / fmt::format("{:016x}.gguf-header", fnv1a(url));
}

std::optional<CachedPrefix> load_cached_prefix(const std::filesystem::path& dir,
                                               const std::string& url) {
  const auto text = read_text_file(cache_entry_path(dir, url));
  if (!text) {
    return std::nullopt;
  }
  const auto end = text->find('\n');
  if (end == std::string::npos) {
    return std::nullopt;
  }
  const auto head = nlohmann::json::parse(text->substr(0, end), nullptr, false);
  if (!head.is_object() || head.value("url", "") != url || !head.contains("size") ||
      !head["size"].is_number_unsigned() || !head.contains("length") ||
      !head["length"].is_number_unsigned() ||
      head["length"].get<std::uint64_t>() != text->size() - end - 1) {
    return std::nullopt;
  }
  CachedPrefix entry{url, head["size"].get<std::uint64_t>(), head.value("validator", ""),
                     text->substr(end + 1)};
  if (entry.validator.empty() || entry.bytes.size() > entry.size) {
    return std::nullopt;
  }
  return entry;
}

Status save_cached_prefix(const std::filesystem::path& dir, const CachedPrefix& entry) {
  if (entry.validator.empty()) {
    return {};
  }
  if (Status made = platform::make_private_dir(dir); !made) {
    return made;
  }
  const nlohmann::json head = {{"url", entry.url},
                               {"size", entry.size},
                               {"validator", entry.validator},
                               {"length", entry.bytes.size()}};
  return platform::write_file_atomic(cache_entry_path(dir, entry.url),
                                     head.dump() + "\n" + entry.bytes);
}

}  // namespace gb10tune::http
