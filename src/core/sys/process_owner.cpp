#include "gb10tune/sys/process_owner.hpp"

#include <fmt/format.h>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::sys {

std::optional<unsigned> parse_status_uid(std::string_view status_text) {
  for (std::string_view line : split(status_text, '\n')) {
    if (line.substr(0, 4) != "Uid:") {
      continue;
    }
    std::string_view rest = trim(line.substr(4));
    const std::size_t end = rest.find_first_of(" \t");
    const auto uid = parse_u64(rest.substr(0, end));
    if (!uid || *uid > 0xffffffffu) {
      return std::nullopt;
    }
    return static_cast<unsigned>(*uid);
  }
  return std::nullopt;
}

std::optional<unsigned> read_process_uid(const platform::Sysroot& root, int pid) {
  const auto text = root.read_file(fmt::format("/proc/{}/status", pid), 1 << 16);
  if (!text) {
    return std::nullopt;
  }
  return parse_status_uid(*text);
}

}  // namespace gb10tune::sys
