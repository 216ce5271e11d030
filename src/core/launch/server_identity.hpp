// Internal to the launch module: is process `pid` still the one that was recorded?
#pragma once

#include <cstdint>
#include <string>

#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::launch::detail {

// The verdict on one pid.
struct Identity {
  bool same = false;  // the recorded process still runs
  bool gone = false;  // no such process (or a zombie)
  std::string why;    // when not the same: "pid 123 now belongs to /usr/bin/vim"
};

// Compares /proc/<pid>/stat's start time with `start_time_ticks` and, when `server_path` is
// not empty, /proc/<pid>/exe with it (the recorded path, or the file it resolves to now).
Identity check_identity(const platform::Sysroot& root, int pid, std::uint64_t start_time_ticks,
                        const std::string& server_path);

}  // namespace gb10tune::launch::detail
