// The process table under /proc: finding processes by their executable's name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::sys {

struct ProcessEntry {
  int pid = 0;
  std::string comm;  // /proc/<pid>/comm (the kernel's 15-character name)
  std::string exe;   // the target of /proc/<pid>/exe, "" when it may not be read
};

// Every process whose comm or exe basename equals `name` (not command-line text, which also
// matches editors and shells). Entries that vanish while scanning are skipped.
std::vector<ProcessEntry> find_processes(const platform::Sysroot& root, std::string_view name);

}  // namespace gb10tune::sys
