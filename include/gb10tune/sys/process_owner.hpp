// Who owns a process: the real uid from /proc/<pid>/status, read under a Sysroot.
#pragma once

#include <optional>
#include <string_view>

#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::sys {

// The real uid (first field of the "Uid:" line) of /proc/<pid>/status text; nullopt when the
// line is missing or malformed.
std::optional<unsigned> parse_status_uid(std::string_view status_text);

// The real uid of `pid`; nullopt when the process is gone or its status unreadable.
std::optional<unsigned> read_process_uid(const platform::Sysroot& root, int pid);

}  // namespace gb10tune::sys
