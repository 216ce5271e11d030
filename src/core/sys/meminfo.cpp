#include "gb10tune/sys/meminfo.hpp"

#include <fmt/format.h>

#include <limits>
#include <map>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::sys {

namespace {

struct Field {
  std::uint64_t bytes = 0;
  bool valid = false;
  int line = 0;
};

// Value of one "Key:   1234 kB" line in bytes; nullopt when the number or unit is odd.
std::optional<std::uint64_t> parse_value(std::string_view rest) {
  const auto words = split_words(rest);
  if (words.empty() || words.size() > 2) {
    return std::nullopt;
  }
  const auto number = parse_u64(words[0]);
  if (!number) {
    return std::nullopt;
  }
  if (words.size() == 1) {
    return number;  // a plain count (HugePages_Total and friends)
  }
  if (words[1] != "kB") {
    return std::nullopt;
  }
  if (*number > std::numeric_limits<std::uint64_t>::max() / 1024) {
    return std::nullopt;
  }
  return *number * 1024;
}

}  // namespace

Expected<MemInfo> parse_meminfo(std::string_view text, std::string_view source) {
  std::map<std::string_view, Field> fields;
  int line_number = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_number;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    const std::string_view key = trim(line.substr(0, colon));
    Field& field = fields[key];
    field.line = line_number;
    if (const auto value = parse_value(line.substr(colon + 1))) {
      field.bytes = *value;
      field.valid = true;
    }
  }

  auto require = [&](std::string_view key) -> Expected<std::uint64_t> {
    const auto it = fields.find(key);
    if (it == fields.end()) {
      return Error{
          fmt::format("{} has no {} line (the file is empty, truncated or not a "
                      "meminfo file); check the path or the --sysroot capture",
                      source, key)};
    }
    if (!it->second.valid) {
      return Error{
          fmt::format("{} line {}: {} is not a number of kB", source, it->second.line, key)};
    }
    return it->second.bytes;
  };
  auto optional = [&](std::string_view key) -> std::uint64_t {
    const auto it = fields.find(key);
    return it != fields.end() && it->second.valid ? it->second.bytes : 0;
  };

  MemInfo info;
  for (auto [key, target] :
       {std::pair{"MemTotal", &info.total_bytes}, std::pair{"MemAvailable", &info.available_bytes},
        std::pair{"MemFree", &info.free_bytes}}) {
    const auto value = require(key);
    if (!value) {
      return value.error();
    }
    *target = *value;
  }
  info.cached_bytes = optional("Cached");
  info.buffers_bytes = optional("Buffers");
  info.swap_total_bytes = optional("SwapTotal");
  info.swap_free_bytes = optional("SwapFree");
  if (info.available_bytes > info.total_bytes || info.free_bytes > info.total_bytes) {
    return Error{
        fmt::format("{}: MemAvailable or MemFree is larger than MemTotal; the file is "
                    "inconsistent",
                    source)};
  }
  return info;
}

Expected<MemInfo> read_meminfo(const platform::Sysroot& root) {
  const auto text = root.read_file("/proc/meminfo");
  if (!text) {
    return text.error();
  }
  return parse_meminfo(*text, root.resolve("/proc/meminfo").string());
}

}  // namespace gb10tune::sys
