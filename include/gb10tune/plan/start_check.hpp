// launch's check of the server it started, once it answers /health and its memory settled: the
// idle process against the plan's figure at load (like with like, expected_memory.hpp), and
// whether the run is one a calibration may learn from (calibration.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gb10tune/plan/calibration.hpp"

namespace gb10tune::plan {

// The result of the check.
struct StartCheck {
  Measurement measurement;
  ExpectedMemory expected;      // with the plan's calibration
  ExpectedMemory uncalibrated;  // without it: what a run is learned against
  // The measurement against `expected`; nullopt when the measurement is unknown or the plan was
  // an estimate (nothing to judge).
  std::optional<MemoryJudgement> judgement;
  double uncalibrated_error_percent = 0.0;  // measured against uncalibrated.at_load
  bool learn = false;                       // a correction may come from this run
  std::string not_learned_because;          // why not, when !learn
  CalibrationRun run;                       // what to record when `learn`
  ProcessReading reading;                   // what was read
};

// Checks `reading` of an idle server started with `plan` on `backend`; `slots` and `at` (ISO
// 8601) go into the run. A run is learned from only when the plan is not an estimate, the
// measurement is known, and the idle server is within kPlanTolerancePercent of the uncalibrated
// figure at load. Never fails.
StartCheck check_started_server(const MemoryPlan& plan, PlanBackend backend,
                                const ProcessReading& reading, std::uint32_t slots,
                                const std::string& at);

// The one-line summary launch prints ("memory: plan at load …"), without what recording did.
std::string describe_start_check(const StartCheck& check, const MemoryPlan& plan);

// The check as the `calibration` object of launch's --json document (the key included).
nlohmann::json start_check_to_json(const StartCheck& check, const MemoryPlan& plan,
                                   const CalibrationKey& key);

// Adds `run` to the store at `path` under `key` and writes it back; the number of runs the key
// now has, or an Error naming the file.
Expected<std::size_t> record_calibration_run(const std::filesystem::path& path,
                                             const CalibrationKey& key, const CalibrationRun& run);

}  // namespace gb10tune::plan
