// The product side of `gb10tune tune`: the server `gb10tune launch` started (its launch record
// and the environment it runs with), its settings, the workload, the knobs this build and goal
// allow, and the TuneSeam over them: each candidate planned by the launch planner with the
// start's settings as command-line values (a plan that does not fit, or that the fit would have
// to lower, is a refusal), started and stopped as launch and stop do, measured with bench's
// workload over HTTP, the original started again with its own argv and environment.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gb10tune/bench/server_endpoint.hpp"
#include "gb10tune/bench/workload.hpp"
#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/launch/launch_planner.hpp"
#include "gb10tune/launch/launch_request.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/tune/tune_runner.hpp"
#include "gb10tune/tune/tuned_profile.hpp"

namespace gb10tune::tune {

// Measured rounds per configuration when --samples is not given: the workload's requests, at
// most this many (12 pairs find a 3% change at a pairs' noise of ~3%, see docs/tune.md).
inline constexpr int kDefaultSamples = 12;

// What the command line asks of a tune.
struct TuneRequest {
  Goal goal = Goal::decode;
  int concurrency = 1;
  double budget_s = 1200;
  std::string prompts;            // --prompts FILE; "" = the shipped workload
  std::uint64_t max_context = 0;  // --max-context; 0 = only what does not fit a slot is left out
  // --depth N: the prompt tokens deep each request is measured at, for the goals whose figure is
  // a decode rate (a filler before its first message); -1 = the default (the workload's deepest
  // prompt, at most what the slot leaves room for), 0 = the workload as written.
  std::int64_t depth = -1;
  int samples = 0;  // 0 = the default above
  bool allow_lossy = false;
  bool resume = false;
  std::string reserve;  // --reserve SIZE: the candidates' plans' reserve ("" = the record's)
  std::string floor;    // --floor SIZE: below it the tune ends ("" = half the reserve, as watch)
  double request_timeout_s = 600;
  Strategy strategy = Strategy::coordinate;  // --strategy
  // --knobs: the knob settings to search (empty: every knob that applies); the others are
  // listed as skipped.
  std::vector<std::string> knobs;
};

// What a tune may touch. Machine facts (the plan's MemAvailable, CPU, GPU) are read under
// `sysroot`; the servers it stops and starts are this machine's processes.
struct TuneEnvironment {
  platform::Environment env;
  platform::Sysroot sysroot;
  gpu::GpuBackend* gpu = nullptr;
  bench::ServerConnector connect;
  std::function<double()> clock;
  std::function<std::string()> now_iso8601;
  launch::NoteSink note;  // what it goes on past
};

// One tune of the launched server.
class TuneSession {
 public:
  // Reads the launch record (none, or its server not running: an Error, ExitCode::failed,
  // telling to launch first), the server's environment, /props, the workload and the knobs; takes
  // the launch lock for the session's life; with `resume` reads the journal. Errors name the
  // thing and the fix (a server launched across RPC workers is refused: ExitCode::usage).
  static Expected<std::unique_ptr<TuneSession>> open(const TuneRequest& request,
                                                     TuneEnvironment environment);
  ~TuneSession();
  TuneSession(const TuneSession&) = delete;
  TuneSession& operator=(const TuneSession&) = delete;

  // The runner's options (knobs, start, samples, budget, floor, journal header, resume); the
  // caller may set progress.
  TuneOptions& options() { return m_options; }
  // The seam over this session; valid while the session lives.
  TuneSeam seam();

  // Every launch setting of `winner`: the start's, with the winner's knob values.
  nlohmann::json winner_settings(const Measurement& winner) const;
  // What `result` was tuned for (model, build, machine, goal, workload, date, gain).
  TunedFor tuned_for(const TuneResult& result) const;
  // The notes open() gathered (workload trimmed, an old journal replaced, …).
  const std::vector<std::string>& notes() const { return m_notes; }
  const std::string& url() const { return m_record.url; }
  const std::filesystem::path& journal_path() const { return m_journal_path; }
  // The depth the decode figures are measured at (0: the workload's prompts as written).
  std::uint64_t depth() const { return m_depth; }

 private:
  TuneSession();
  struct Planned;
  // The steps of open(), in order.
  Status read_server(const TuneRequest& request);
  Status prepare_workload(const TuneRequest& request);
  Status deepen_workload(const TuneRequest& request, const bench::PromptTokenCounter& count);
  Status read_journal_for(bool resume);
  Status prepare_options(const TuneRequest& request);
  // Plans a candidate: a memory-changing one against MemAvailable plus what stopping the running
  // server frees, its prompt cache lowered when that alone keeps it from fitting
  // (candidate_memory.hpp); any other only for its command.
  Expected<PlanCheck> plan(const nlohmann::json& settings);
  // The launch plan of every launch setting `values`, fit off, crediting `freed` bytes.
  Expected<launch::LaunchPlan> plan_values(nlohmann::json values, std::uint64_t freed) const;
  Status restart(const nlohmann::json& settings, const std::atomic<bool>& stop, const Tick& tick);
  Status restore();
  Expected<WorkloadRun> measure(const MeasureAsk& ask, const std::atomic<bool>& stop,
                                const Tick& tick);
  Status append_journal(const nlohmann::json& line);
  // Every launch setting: the original's, with `searched` (knob → value) over them.
  nlohmann::json full_settings(const nlohmann::json& searched) const;
  Status stop_running();

  TuneEnvironment m_env;
  TuneRequest m_request;
  launch::StatePaths m_paths;
  std::optional<launch::LaunchLock> m_lock;
  launch::LaunchRecord m_record;         // the original server's
  platform::Environment m_original_env;  // the environment it runs with
  nlohmann::json m_settings;             // every launch setting of the original (key → value)
  bench::Workload m_workload;            // fitted to the slot, deepened to m_depth
  std::string m_workload_digest;         // of the requests as fitted, before any depth filler
  std::uint64_t m_depth = 0;
  bench::PromptTokenCounter m_count_prompt;  // the original server's token counts
  bench::ServerInfo m_info;                  // the original server's /props
  std::string m_machine;
  TuneOptions m_options;
  std::optional<Journal> m_resume;
  std::filesystem::path m_journal_path;
  std::string m_journal_text;
  std::vector<std::string> m_notes;
  std::shared_ptr<Planned> m_planned;  // the last plan, for the start that follows it
  // The plans of the settings started so far (their searched settings' JSON text): one started
  // again (the incumbent's re-measure) is not planned again.
  std::map<std::string, std::shared_ptr<Planned>> m_started;
  int m_running_pid = 0;  // the server tune runs now (0: none)
};

// A usage Error when `name` cannot be a saved profile's name: other characters than
// [a-z0-9._-], a leading '.', or a shipped profile's name (launch would pick that first).
Status check_profile_name(const std::string& name);

// Saves `document` (tuned_profile_document) as `name` in the user's profile folder (created),
// atomically; returns its path. check_profile_name's Error, or ExitCode::failed when it cannot
// be written.
Expected<std::filesystem::path> save_tuned_profile(const platform::Environment& env,
                                                   const std::string& name,
                                                   const nlohmann::json& document);

}  // namespace gb10tune::tune
