// The tune loop (the report's method, K7): measure the starting settings, then every candidate
// the search proposes while the time budget allows. Each candidate is compared paired, on the
// same requests, with the incumbent measured around it in time: its run before and a run right
// after the candidate, interpolated to the candidate's time, so that a server drifting at a
// steady rate moves neither; the run-to-run noise those re-measurements show widens every
// interval. A comparison that is undecided but favours the candidate by kSmallestGain or more
// gets another round of both, up to max_rounds. At the end the winner's last run is compared with
// the original server measured right after it: that comparison alone says whether the winner is
// better (gain). The ORIGINAL server runs again when it returns. Everything it does to
// a server goes through a TuneSeam, so that tests drive it with fakes and the product with the
// launch planner, launch's start and stop, and bench's HTTP workload (tune_session.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/bench/server_run.hpp"
#include "gb10tune/tune/knobs.hpp"
#include "gb10tune/tune/tune_journal.hpp"
#include "gb10tune/tune/tune_result.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::tune {

// What the memory plan says about a candidate's settings.
struct PlanCheck {
  bool fits = true;
  std::string refusal;  // the plan's own sentence when it does not fit
};

// One workload run asked of the server.
struct MeasureAsk {
  int warmup = 1;   // rounds run first and discarded
  int samples = 1;  // measured rounds
  int concurrency = 1;
  // Fields added to every request body (per-request knobs, cache_prompt for prefill).
  nlohmann::json fields = nlohmann::json::object();
};

// What one workload run gave.
struct WorkloadRun {
  bench::LevelResult level;
  double warmup_s = 0;   // the warm-up rounds, client-timed
  double samples_s = 0;  // the measured rounds
};

// Called about every second while tune waits on the server (a start, a round): the runner
// samples MemAvailable and the cancel flag there, and raises its stop flag.
using Tick = std::function<void()>;

// Everything tune does to the world.
struct TuneSeam {
  // Plans `settings` (every launch setting: the start's with the candidate's knobs); a plan
  // that does not fit is a PlanCheck with the refusal, not an Error. An Error: the settings
  // cannot be built into a command at all.
  std::function<Expected<PlanCheck>(const nlohmann::json& settings)> plan;
  // Stops the server tune runs now and starts one with `settings` (planned before), ready when
  // it returns. An Error when the start fails, or (ExitCode::interrupted) once `stop` is set.
  std::function<Status(const nlohmann::json& settings, const std::atomic<bool>& stop,
                       const Tick& tick)>
      restart;
  // Stops whatever tune runs and starts the original server again with its original command
  // line and environment, whatever any flag says; an Error when it does not come back.
  std::function<Status()> restore;
  // Runs the workload on the running server; ExitCode::interrupted once `stop` is set, an
  // Error when a request fails.
  std::function<Expected<WorkloadRun>(const MeasureAsk& ask, const std::atomic<bool>& stop,
                                      const Tick& tick)>
      measure;
  std::function<std::optional<std::uint64_t>()> mem_available;  // nullopt: unreadable
  std::function<double()> clock;                                // monotonic seconds
  std::function<Status(const nlohmann::json& line)> journal;    // appends a line; may be empty
};

// What the runner tells its caller as it goes.
enum class TuneEventKind {
  measuring_start,  // the starting settings are being measured
  candidate,        // a candidate begins
  candidate_done,   // a candidate has its outcome (result set)
  costs_known,      // after the first measured candidate: the costs and what fits
  remeasure,        // the incumbent is re-measured (drift)
  restoring,        // the original server is being started again
};

// One progress event.
struct TuneEvent {
  TuneEventKind kind = TuneEventKind::measuring_start;
  std::optional<Candidate> candidate;     // candidate, candidate_done
  std::optional<CandidateResult> result;  // candidate_done
  int estimated_total = 0;                // candidates this tune will measure, about
  double elapsed_s = 0;
  std::optional<double> eta_s;  // the time left, once the costs are known
  nlohmann::json best;          // the incumbent's settings
  double best_median = 0;       // its measured median (0 before the start is measured)
  std::optional<double> restart_s;
  std::optional<double> sample_s;
  std::optional<int> candidates_left;
};

// How a tune runs.
struct TuneOptions {
  Goal goal = Goal::decode;
  int concurrency = 1;
  int samples = 12;  // measured rounds per configuration
  int warmup = 1;    // rounds before them, every time (so that every run sends the same requests)
  double budget_s = 1200;
  double confidence = 0.95;
  // Rounds (a run of the candidate and one of the incumbent) a comparison may take at most.
  int max_rounds = 3;
  std::uint64_t floor_bytes = 0;  // MemAvailable below this ends the tune (0: no floor)
  std::vector<KnobPlan> knobs;    // plan_knobs's answer
  Strategy strategy = Strategy::coordinate;
  nlohmann::json start = nlohmann::json::object();  // the searched knobs' starting values
  JournalHeader header;
  const Journal* resume = nullptr;                 // a journal to continue (--resume)
  std::function<void(const TuneEvent&)> progress;  // may be empty
};

// A finished tune: the result, and why it failed where it did.
struct TuneRun {
  TuneResult result;
  bool measured_start = false;  // the start has a measurement (there is something to report)
  std::optional<Error> error;   // the failure that ended it (result.stopped says how)
  std::string journal_warning;  // the first journal line that could not be written
};

// Runs the tune. The original server is running again when it returns, unless restoring it
// failed (then `error` says so, ExitCode::server_failed). A candidate the plan refuses is never
// started; a failed start or request ends the tune (StopReason::failed), as do `cancel`
// (interrupted) and MemAvailable below the floor (memory_floor), each after the original is
// restored. The budget is a bound: work whose expected cost does not fit what is left (keeping
// the final comparison's run) is not started, and whatever runs when the budget is spent is
// stopped (StopReason::budget), so that the tune ends within the budget plus the original's
// restart. Only a tune that ends done, or on the budget before starting what would not fit, makes
// the final comparison. A resume whose journal is for another tune is an Error (ExitCode::usage)
// before anything runs.
TuneRun run_tune(const TuneOptions& options, const TuneSeam& seam, const std::atomic<bool>& cancel);

// The goal's figure per measured request of `level` in workload order (decode t/s or time to
// first token per completion, 0 where the server did not report it; the total decode of each
// round for throughput), and the names they pair by.
std::vector<double> goal_values(Goal goal, const bench::LevelResult& level);
std::vector<std::string> goal_requests(Goal goal, const bench::LevelResult& level);

// The request fields of `settings`: each per-request knob's request_field with its value, and
// for the prefill goal "cache_prompt": false (a prompt the server has cached would show no
// prefill at all) and "max_tokens": 1 (the answer after the first token measures nothing).
nlohmann::json request_fields(const std::vector<KnobPlan>& knobs, const nlohmann::json& settings,
                              Goal goal);

// `settings` without the per-request knobs: what the server's command line depends on.
nlohmann::json restart_settings(const std::vector<KnobPlan>& knobs, const nlohmann::json& settings);

// "decode t/s", "total decode t/s @4", "time to first token ms".
std::string metric_label(Goal goal, int concurrency);

// The exit code of a finished tune: 0 done or budget, 130 interrupted, 1 memory floor, the
// error's code (5: a failed start) otherwise.
ExitCode tune_exit_code(const TuneRun& run);

}  // namespace gb10tune::tune
