// What a `gb10tune watch` begins with: the server to watch, the memory thresholds (from the
// options, else from the launch record's plan) and the restart policy.
#pragma once

#include <cstdint>
#include <optional>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/util/expected.hpp"
#include "gb10tune/watch/watch_policy.hpp"

namespace gb10tune::watch {

// The server a watch begins with: the pid file's, when it runs; none when `wait` (the watch
// waits for a launch). Otherwise an Error (ExitCode::failed) saying that nothing runs, with a
// stale pid file's reason, and how to start a server or wait for one.
Expected<std::optional<launch::RunningServer>> server_to_watch(const launch::PidFileStatus& status,
                                                               bool wait);

// The threshold sizes given on the command line; nullopt where an option was not given.
struct ThresholdChoice {
  std::optional<std::uint64_t> warn;
  std::optional<std::uint64_t> floor;
  std::optional<std::uint64_t> hysteresis;
};

// The warning default: the reserve of the plan in `record` (its settings' "reserve"), else
// plan::kDefaultReserveBytes (no record, or one without a readable reserve).
std::uint64_t recorded_reserve(const launch::LaunchRecord* record);

// The thresholds: those given, else warn = recorded_reserve(record), floor = half of warn and
// hysteresis 1 GiB. A usage Error when the floor is not below the warning.
Expected<Thresholds> resolve_thresholds(const ThresholdChoice& given,
                                        const launch::LaunchRecord* record);

// A usage Error when a level given (--warn, then --floor) is at or above `mem_total_bytes`
// (MemTotal): MemAvailable never reaches it, so the watch would warn or stop at once. Names the
// option, its size and MemTotal.
Status thresholds_within_memory(const ThresholdChoice& given, std::uint64_t mem_total_bytes);

// The restart policy of the options; the back-off's cap is at least the first delay.
RestartPolicy restart_policy(bool enabled, double first_delay_s, double max_delay_s,
                             int max_attempts);

}  // namespace gb10tune::watch
