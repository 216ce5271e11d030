// OS identity: distribution (os-release), kernel release, machine architecture.
#pragma once

#include <string>

#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::sys {

struct OsInfo {
  std::string pretty_name;  // "Ubuntu 24.04.3 LTS", or "" when os-release is unreadable
  std::string id;           // "ubuntu"
  std::string version_id;   // "24.04"
  std::string kernel;       // "6.11.0-1016-nvidia"
  std::string arch;         // "aarch64", "x86_64"
};

// Reads /etc/os-release (or /usr/lib/os-release) and the kernel facts under `root`. Never
// fails: what cannot be read stays empty. `fallback_arch` is used when the captured tree
// does not say (the live machine passes uname's answer).
OsInfo read_os_info(const platform::Sysroot& root, const std::string& fallback_arch);

// The value map of an os-release file: KEY=value lines, with shell quoting removed.
std::string os_release_value(std::string_view text, std::string_view key);

}  // namespace gb10tune::sys
