#include "gb10tune/tune/tune_runner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::tune {

namespace {

// Why a step of the loop did not go on.
struct Halt {
  StopReason reason = StopReason::failed;
  std::optional<Error> error;  // for failed
};

// One tune, as a state machine over the seam.
class TuneLoop {
 public:
  TuneLoop(const TuneOptions& options, const TuneSeam& seam, const std::atomic<bool>& cancel)
      : m_options(options),
        m_seam(seam),
        m_cancel(cancel),
        m_search(make_search(options.strategy, options.knobs, options.start)),
        m_budget(options.budget_s),
        m_start_restart(restart_settings(options.knobs, options.start)) {
    m_started_at = m_seam.clock();
    m_running = m_start_restart;
    TuneResult& r = m_run.result;
    r.goal = options.goal;
    r.concurrency = options.concurrency;
    r.metric_label = metric_label(options.goal, options.concurrency);
    r.higher_is_better = options.goal != Goal::prefill;
    r.knobs = options.knobs;
    r.budget_s = options.budget_s;
    r.strategy = options.strategy;
  }

  TuneRun run();

 private:
  double elapsed() const { return m_seam.clock() - m_started_at; }
  // Samples the cancel flag and MemAvailable; raises m_stop with its reason once.
  void tick();
  void journal(const nlohmann::json& line);
  void emit(TuneEventKind kind, const std::optional<Candidate>& candidate = std::nullopt,
            const std::optional<CandidateResult>& result = std::nullopt);
  std::optional<Halt> resume();
  // A halt for `error`: the reason m_stop gives when it is up, else failed.
  Halt halt_for(const Error& error) const;
  // Makes the server run `settings` (a restart, the original, or nothing); adds the seconds
  // it took to `restart_s`.
  std::optional<Halt> ensure_running(const nlohmann::json& settings, double& restart_s);
  Expected<Measurement> measure(const nlohmann::json& settings, CandidateCost& cost);
  std::optional<Halt> measure_start();
  // Measures `candidate`; a halt ends the tune (the candidate is recorded first).
  std::optional<Halt> try_candidate(const Candidate& candidate);
  CandidateResult& record(CandidateResult result);
  void finish(std::optional<Halt> halt);
  void remeasure();
  bool needs_restart(const nlohmann::json& settings) const {
    return restart_settings(m_options.knobs, settings) != m_running;
  }

  const TuneOptions& m_options;
  const TuneSeam& m_seam;
  const std::atomic<bool>& m_cancel;
  std::unique_ptr<Search> m_search;
  TuneBudget m_budget;
  nlohmann::json m_start_restart;  // the start's settings that need a restart
  nlohmann::json m_running;        // the restart settings of the server running now
  bool m_original = true;          // it is the original process (nothing restarted yet)
  std::atomic<bool> m_stop{false};
  StopReason m_stop_reason = StopReason::interrupted;
  double m_started_at = 0;
  Measurement m_incumbent;  // the incumbent's latest measurement
  bool m_costs_said = false;
  TuneRun m_run;
};

void TuneLoop::tick() {
  if (m_stop.load()) {
    return;
  }
  if (m_cancel.load()) {
    m_stop_reason = StopReason::interrupted;
    m_stop.store(true);
    return;
  }
  if (m_options.floor_bytes > 0 && m_seam.mem_available) {
    const auto available = m_seam.mem_available();
    if (available && *available < m_options.floor_bytes) {
      m_stop_reason = StopReason::memory_floor;
      m_stop.store(true);
    }
  }
}

void TuneLoop::journal(const nlohmann::json& line) {
  if (!m_seam.journal) {
    return;
  }
  if (const Status written = m_seam.journal(line); !written && m_run.journal_warning.empty()) {
    m_run.journal_warning = written.error().message;
  }
}

void TuneLoop::emit(TuneEventKind kind, const std::optional<Candidate>& candidate,
                    const std::optional<CandidateResult>& result) {
  if (!m_options.progress) {
    return;
  }
  TuneEvent event;
  event.kind = kind;
  event.candidate = candidate;
  event.result = result;
  event.elapsed_s = elapsed();
  event.best = m_search->incumbent();
  event.best_median = m_incumbent.stats.median;
  event.restart_s = m_budget.restart_s();
  event.sample_s = m_budget.sample_s();
  const int proposed = m_search->proposed();
  int still = m_search->remaining_at_most();
  event.candidates_left = m_budget.candidates_left(event.elapsed_s, m_options.samples, true);
  if (event.candidates_left) {
    still = std::min(still, *event.candidates_left);
    if (const auto each = m_budget.candidate_s(m_options.samples, true)) {
      event.eta_s = (still + 1) * *each;  // the candidates and the final re-measure
    }
  }
  event.estimated_total = proposed + still;
  m_options.progress(event);
}

Halt TuneLoop::halt_for(const Error& error) const {
  if (m_stop.load()) {
    return Halt{m_stop_reason, std::nullopt};
  }
  return Halt{StopReason::failed, error};
}

std::optional<Halt> TuneLoop::ensure_running(const nlohmann::json& settings, double& restart_s) {
  const nlohmann::json wanted = restart_settings(m_options.knobs, settings);
  if (wanted == m_running) {
    return std::nullopt;
  }
  const double before = m_seam.clock();
  Status started;
  if (wanted == m_start_restart) {
    started = m_seam.restore();  // the start's settings: the original command line
  } else {
    started = m_seam.restart(settings, m_stop, [this] { tick(); });
  }
  restart_s += m_seam.clock() - before;
  if (!started) {
    // What runs now is unknown: the next step restores the original.
    m_running = nullptr;
    m_original = false;
    return halt_for(started.error());
  }
  m_running = wanted;
  m_original = wanted == m_start_restart;
  return std::nullopt;
}

Expected<Measurement> TuneLoop::measure(const nlohmann::json& settings, CandidateCost& cost) {
  MeasureAsk ask;
  ask.warmup = m_options.warmup;
  ask.samples = m_options.samples;
  ask.concurrency = m_options.concurrency;
  ask.fields = request_fields(m_options.knobs, settings, m_options.goal);
  tick();
  if (m_stop.load()) {
    return Error{"stopped before the measurement", ExitCode::interrupted};
  }
  auto run = m_seam.measure(ask, m_stop, [this] { tick(); });
  if (!run) {
    return run.error();
  }
  cost.warmup_s = run->warmup_s;
  cost.samples_s = run->samples_s;
  cost.samples = static_cast<int>(run->level.samples.size());
  return make_measurement(settings, goal_requests(m_options.goal, run->level),
                          goal_values(m_options.goal, run->level));
}

std::optional<Halt> TuneLoop::measure_start() {
  emit(TuneEventKind::measuring_start);
  CandidateCost cost;
  auto start = measure(m_options.start, cost);
  if (!start) {
    return halt_for(Error{"the starting settings could not be measured: " + start.error().message,
                          start.error().code});
  }
  m_run.result.start = *start;
  m_run.measured_start = true;
  m_incumbent = *start;
  journal(journal_start_line(*start));
  return std::nullopt;
}

std::optional<Halt> TuneLoop::resume() {
  const Journal& journal = *m_options.resume;
  if (const std::string why = resume_mismatch(journal, m_options.header); !why.empty()) {
    return Halt{StopReason::failed, Error{why, ExitCode::usage}};
  }
  if (const Status replayed = replay_journal(journal, *m_search); !replayed) {
    return Halt{StopReason::failed, replayed.error()};
  }
  if (journal.start) {
    m_run.result.start = *journal.start;
    m_run.measured_start = true;
    m_incumbent = *journal.start;
  }
  for (const CandidateResult& done : journal.candidates) {
    if (done.outcome == Outcome::better) {
      m_incumbent = done.measured;
    }
    if (done.outcome == Outcome::better || done.outcome == Outcome::not_better) {
      m_budget.add(done.cost);
    }
    m_run.result.candidates.push_back(done);
  }
  return std::nullopt;
}

CandidateResult& TuneLoop::record(CandidateResult result) {
  m_search->record(result.candidate, result.outcome);
  journal(journal_candidate_line(result));
  m_run.result.candidates.push_back(std::move(result));
  emit(TuneEventKind::candidate_done, m_run.result.candidates.back().candidate,
       m_run.result.candidates.back());
  return m_run.result.candidates.back();
}

std::optional<Halt> TuneLoop::try_candidate(const Candidate& candidate) {
  emit(TuneEventKind::candidate, candidate);
  CandidateResult result;
  result.candidate = candidate;
  const KnobPlan* knob = nullptr;
  for (const KnobPlan& plan : m_options.knobs) {
    if (plan.knob != nullptr && plan.knob->setting == candidate.setting) {
      knob = &plan;
    }
  }
  // A grid point changing several knobs is applied by restart when any of them needs one.
  result.mode = knob != nullptr                     ? knob->mode
                : needs_restart(candidate.settings) ? ApplyMode::restart
                                                    : ApplyMode::per_request;
  if (needs_restart(candidate.settings)) {
    // Never start what the plan says does not fit (an over-commit freezes a GB10).
    const auto checked = m_seam.plan(candidate.settings);
    if (!checked || !checked->fits) {
      result.outcome = checked ? Outcome::does_not_fit : Outcome::failed;
      result.why = checked ? checked->refusal : checked.error().message;
      record(std::move(result));
      return std::nullopt;
    }
  }
  std::optional<Halt> halt = ensure_running(candidate.settings, result.cost.restart_s);
  if (!halt) {
    auto measured = measure(candidate.settings, result.cost);
    if (measured) {
      result.measured = std::move(*measured);
    } else {
      halt = halt_for(measured.error());
    }
  }
  if (halt) {
    result.outcome = Outcome::failed;
    result.why = halt->error ? halt->error->message : std::string(to_string(halt->reason));
    if (halt->reason == StopReason::failed) {
      record(std::move(result));  // a failed candidate is never kept, and is journalled
    }
    return halt;
  }
  result.against = bench::compare_paired(m_incumbent.values, result.measured.values,
                                         m_run.result.higher_is_better, m_options.confidence);
  result.outcome =
      result.against.verdict == bench::Verdict::better ? Outcome::better : Outcome::not_better;
  m_budget.add(result.cost);
  const CandidateResult& kept = record(std::move(result));
  if (kept.outcome == Outcome::better) {
    m_incumbent = kept.measured;
  }
  if (!m_costs_said) {
    m_costs_said = true;
    emit(TuneEventKind::costs_known);
  }
  return std::nullopt;
}

void TuneLoop::remeasure() {
  emit(TuneEventKind::remeasure);
  const nlohmann::json best = m_search->incumbent();
  double restart_s = 0;
  std::optional<Halt> halt = ensure_running(best, restart_s);
  if (!halt) {
    CandidateCost cost;
    auto again = measure(best, cost);
    if (again) {
      m_run.result.winner = std::move(*again);
      m_run.result.drift =
          bench::compare_paired(m_incumbent.values, m_run.result.winner.values,
                                m_run.result.higher_is_better, m_options.confidence);
      return;
    }
    halt = halt_for(again.error());
  }
  // No re-measure: the winner is its last measurement, and the tune says why it ended.
  m_run.result.winner = m_incumbent;
  m_run.result.stopped = halt->reason;
  if (halt->error) {
    m_run.error = halt->error;
  }
}

void TuneLoop::finish(std::optional<Halt> halt) {
  if (!halt && m_run.measured_start) {
    remeasure();
  } else {
    m_run.result.winner = m_incumbent;
    if (halt) {
      m_run.result.stopped = halt->reason;
      m_run.error = halt->error;
    }
  }
  if (m_run.measured_start) {
    m_run.result.gain = bench::compare_paired(m_run.result.start.values, m_run.result.winner.values,
                                              m_run.result.higher_is_better, m_options.confidence);
  }
  if (!m_original) {
    emit(TuneEventKind::restoring);
    if (const Status restored = m_seam.restore(); !restored) {
      m_run.error =
          Error{fmt::format("{}{}", m_run.error ? m_run.error->message + "; then " : std::string(),
                            restored.error().message),
                ExitCode::server_failed};
    } else {
      m_original = true;
    }
  }
  m_run.result.elapsed_s = elapsed();
}

TuneRun TuneLoop::run() {
  std::optional<Halt> halt;
  if (m_options.resume != nullptr) {
    halt = resume();
    if (halt && halt->error && halt->error->code == ExitCode::usage) {
      m_run.error = halt->error;  // nothing ran: a journal of another tune
      m_run.result.stopped = StopReason::failed;
      return std::move(m_run);
    }
  } else {
    journal(journal_header_line(m_options.header));
  }
  if (!halt && !m_run.measured_start) {
    halt = measure_start();
  }
  while (!halt) {
    tick();
    if (m_stop.load()) {
      halt = Halt{m_stop_reason, std::nullopt};
      break;
    }
    const std::optional<Candidate> next = m_search->next();
    if (!next) {
      m_run.result.stopped = StopReason::done;
      break;
    }
    // The original must start again at the end once anything was restarted: its start counts.
    const bool restart = needs_restart(next->settings);
    const double restore_s = restart || !m_original ? m_budget.restart_s().value_or(0) : 0;
    if (!m_budget.may_start(elapsed() + restore_s, m_options.samples, restart)) {
      m_run.result.stopped = StopReason::budget;
      break;
    }
    halt = try_candidate(*next);
  }
  finish(halt);
  return std::move(m_run);
}

}  // namespace

TuneRun run_tune(const TuneOptions& options, const TuneSeam& seam,
                 const std::atomic<bool>& cancel) {
  TuneLoop loop(options, seam, cancel);
  return loop.run();
}

}  // namespace gb10tune::tune
