#include "gb10tune/watch/watch_setup.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::watch {

namespace {

constexpr std::uint64_t kDefaultHysteresisBytes = 1ull << 30;

}  // namespace

Expected<std::optional<launch::RunningServer>> server_to_watch(const launch::PidFileStatus& status,
                                                               bool wait) {
  if (status.state == launch::PidFileState::running) {
    return std::optional<launch::RunningServer>(status.server);
  }
  if (wait) {
    return std::optional<launch::RunningServer>();
  }
  const std::string why = status.state == launch::PidFileState::stale
                              ? " (the pid file is stale: " + status.why + ")"
                              : "";
  return Error{fmt::format("no llama-server started by gb10tune is running{}; start one with "
                           "`gb10tune launch`, or pass --wait to wait for one",
                           why),
               ExitCode::failed};
}

std::uint64_t recorded_reserve(const launch::LaunchRecord* record) {
  return record != nullptr && record->planned.reserve_bytes ? *record->planned.reserve_bytes
                                                            : plan::kDefaultReserveBytes;
}

Expected<Thresholds> resolve_thresholds(const ThresholdChoice& given,
                                        const launch::LaunchRecord* record) {
  const std::uint64_t warn = given.warn ? *given.warn : recorded_reserve(record);
  const std::uint64_t floor = given.floor.value_or(warn / 2);
  const std::uint64_t hysteresis = given.hysteresis.value_or(kDefaultHysteresisBytes);
  if (floor >= warn) {
    return Error{fmt::format("--floor {} is not below --warn {}: the server would be stopped "
                             "without a warning first; lower --floor or raise --warn",
                             format_bytes(floor), format_bytes(warn)),
                 ExitCode::usage};
  }
  return Thresholds{warn, floor, hysteresis};
}

Status thresholds_within_memory(const ThresholdChoice& given, std::uint64_t mem_total_bytes) {
  for (const auto& [option, level] : {std::pair{"--warn", given.warn}, {"--floor", given.floor}}) {
    if (level && *level >= mem_total_bytes) {
      return Error{
          fmt::format("{} {} is {} this machine's memory (MemTotal {}): "
                      "MemAvailable can never reach it, so the watch would act at the "
                      "first sample; give {} a size below {}",
                      option, format_bytes(*level), *level > mem_total_bytes ? "above" : "all of",
                      format_bytes(mem_total_bytes), option, format_bytes(mem_total_bytes)),
          ExitCode::usage};
    }
  }
  return {};
}

RestartPolicy restart_policy(bool enabled, double first_delay_s, double max_delay_s,
                             int max_attempts) {
  RestartPolicy restart;
  restart.enabled = enabled;
  restart.first_delay_s = first_delay_s;
  restart.max_delay_s = std::max(max_delay_s, first_delay_s);
  restart.max_attempts = max_attempts;
  return restart;
}

}  // namespace gb10tune::watch
