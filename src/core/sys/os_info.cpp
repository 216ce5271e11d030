#include "gb10tune/sys/os_info.hpp"

#include "gb10tune/util/strings.hpp"

namespace gb10tune::sys {

namespace {

std::string unquote(std::string_view value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) {
      ++i;  // os-release allows backslash escapes of $, ", \ and `
    }
    out.push_back(value[i]);
  }
  return out;
}

std::string first_line(const Expected<std::string>& text) {
  if (!text) {
    return {};
  }
  return std::string(trim(split(*text, '\n').front()));
}

}  // namespace

std::string os_release_value(std::string_view text, std::string_view key) {
  for (std::string_view line : split(text, '\n')) {
    line = trim(line);
    const std::size_t eq = line.find('=');
    if (eq != std::string_view::npos && line.substr(0, eq) == key) {
      return unquote(line.substr(eq + 1));
    }
  }
  return {};
}

OsInfo read_os_info(const platform::Sysroot& root, const std::string& fallback_arch) {
  OsInfo info;
  auto release = root.read_file("/etc/os-release", 64 * 1024);
  if (!release) {
    release = root.read_file("/usr/lib/os-release", 64 * 1024);
  }
  if (release) {
    info.pretty_name = os_release_value(*release, "PRETTY_NAME");
    info.id = os_release_value(*release, "ID");
    info.version_id = os_release_value(*release, "VERSION_ID");
  }
  info.kernel = first_line(root.read_file("/proc/sys/kernel/osrelease", 4096));
  info.arch = first_line(root.read_file("/proc/sys/kernel/arch", 4096));
  if (info.arch.empty()) {
    info.arch = fallback_arch;
  }
  return info;
}

}  // namespace gb10tune::sys
