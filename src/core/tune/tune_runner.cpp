#include "gb10tune/tune/tune_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gb10tune/bench/run_noise.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::tune {

namespace {

// Why a step of the loop did not go on.
// How a candidate is applied: its knob's way, or, for several knobs changed at once, by
// restart when any of them needs one.
ApplyMode apply_mode_of(const std::vector<KnobPlan>& knobs, const Candidate& candidate) {
  const KnobPlan* knob = nullptr;
  for (const KnobPlan& plan : knobs) {
    if (plan.knob != nullptr && plan.knob->setting == candidate.setting) {
      knob = &plan;
    }
  }
  const bool restart =
      restart_settings(knobs, candidate.settings) != restart_settings(knobs, candidate.incumbent);
  return knob != nullptr ? knob->mode : restart ? ApplyMode::restart : ApplyMode::per_request;
}

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
  // Samples the cancel flag, the budget and MemAvailable; raises m_stop with its reason once.
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
  // One run of the workload under `settings` (the server already runs them), timed.
  Expected<Measurement> measure(const nlohmann::json& settings, CandidateCost& cost);
  // ensure_running and measure.
  Expected<Measurement> run_of(const nlohmann::json& settings, CandidateCost& cost,
                               std::optional<Halt>& halt);
  std::optional<Halt> measure_start();
  // Measures `candidate`; a halt ends the tune (a failed candidate is recorded first).
  std::optional<Halt> try_candidate(const Candidate& candidate);
  CandidateResult& record(CandidateResult result);
  // The expected cost of a candidate's first round (two runs, two restarts when it restarts),
  // and of the final comparison; nullopt before anything was measured.
  std::optional<double> round_cost(bool restart) const;
  std::optional<double> final_cost() const;
  void finish(std::optional<Halt> halt);
  // The winner's last run against the original's run right after it.
  std::optional<Halt> final_comparison();
  bool needs_restart(const nlohmann::json& settings) const {
    return restart_settings(m_options.knobs, settings) != m_running;
  }

  const TuneOptions& m_options;
  const TuneSeam& m_seam;
  const std::atomic<bool>& m_cancel;
  std::unique_ptr<Search> m_search;
  TuneBudget m_budget;
  bench::RunNoise m_noise;
  nlohmann::json m_start_restart;  // the start's settings that need a restart
  nlohmann::json m_running;        // the restart settings of the server running now
  bool m_original = true;          // it is the original process (nothing restarted yet)
  std::atomic<bool> m_stop{false};
  StopReason m_stop_reason = StopReason::interrupted;
  double m_started_at = 0;
  Measurement m_incumbent;          // the incumbent's latest run
  bool m_incumbent_stale = false;   // from an earlier process (--resume): run it again first
  bool m_incumbent_chosen = false;  // that run is the one that chose it (not a fresh one)
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
  if (elapsed() > m_options.budget_s) {
    m_stop_reason = StopReason::budget;  // the budget is a bound: what runs now stops
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

std::optional<double> TuneLoop::round_cost(bool restart) const {
  return m_budget.round_s(m_options.samples, restart);
}

std::optional<double> TuneLoop::final_cost() const {
  return m_budget.final_s(m_options.samples, m_incumbent_chosen);
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
  int still = m_search->expected_remaining();
  if (const auto each = round_cost(true); each && *each > 0) {
    const double left = m_options.budget_s - event.elapsed_s - final_cost().value_or(0);
    event.candidates_left = left > 0 ? static_cast<int>(left / *each) : 0;
    still = std::min(still, *event.candidates_left);
    event.eta_s = still * *each + final_cost().value_or(0);
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
  const double took = m_seam.clock() - before;
  restart_s += took;
  if (!started) {
    // What runs now is unknown: the next step restores the original.
    m_running = nullptr;
    m_original = false;
    return halt_for(started.error());
  }
  m_budget.add_restart(took);
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
  const double began = elapsed();
  auto run = m_seam.measure(ask, m_stop, [this] { tick(); });
  if (!run) {
    return run.error();
  }
  cost.warmup_s += run->warmup_s;
  cost.samples_s += run->samples_s;
  const int samples = static_cast<int>(run->level.samples.size());
  cost.samples += samples;
  m_budget.add_run(run->warmup_s + run->samples_s, samples);
  Measurement measured = make_measurement(settings, goal_requests(m_options.goal, run->level),
                                          goal_values(m_options.goal, run->level));
  measured.at_s = (began + elapsed()) / 2;
  return measured;
}

Expected<Measurement> TuneLoop::run_of(const nlohmann::json& settings, CandidateCost& cost,
                                       std::optional<Halt>& halt) {
  halt = ensure_running(settings, cost.restart_s);
  if (halt) {
    return Error{halt->error ? halt->error->message : std::string(to_string(halt->reason)),
                 ExitCode::failed};
  }
  auto measured = measure(settings, cost);
  if (!measured) {
    halt = halt_for(measured.error());
  }
  return measured;
}

std::optional<Halt> TuneLoop::measure_start() {
  emit(TuneEventKind::measuring_start);
  CandidateCost cost;
  auto start = measure(m_options.start, cost);
  if (!start) {
    if (m_stop.load()) {
      return Halt{m_stop_reason, std::nullopt};
    }
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
    } else if (done.after) {
      m_incumbent = *done.after;
    }
    if (done.drift && done.drift->pairs >= 2) {
      // The run-to-run noise the earlier process saw: its level shifts again.
      const double shift = std::log(done.drift->ratio);
      const double pairs_share =
          done.drift->log_ratio_sd * done.drift->log_ratio_sd / done.drift->pairs;
      m_noise.add_shift(shift, pairs_share);
    }
    if (done.cost.samples > 0) {
      m_budget.add_run(done.cost.warmup_s + done.cost.samples_s, done.cost.samples);
    }
    if (done.cost.restart_s > 0) {
      m_budget.add_restart(done.cost.restart_s / 2);  // a round restarts twice
    }
    m_run.result.candidates.push_back(done);
  }
  // Its runs were taken by another process at other times: the incumbent runs again first.
  m_incumbent_stale = true;
  return std::nullopt;
}

CandidateResult& TuneLoop::record(CandidateResult result) {
  m_search->record(result.candidate, decision_of(result, m_run.result.higher_is_better));
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
  result.mode = apply_mode_of(m_options.knobs, candidate);
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
  const bool higher = m_run.result.higher_is_better;
  const double confidence = m_options.confidence;
  std::optional<Halt> halt;
  if (m_incumbent_stale) {
    auto fresh = run_of(candidate.incumbent, result.cost, halt);
    if (!fresh) {
      return halt;
    }
    m_incumbent = std::move(*fresh);
    m_incumbent_stale = false;
    m_incumbent_chosen = false;
  }
  // The pairs of every round: the incumbent interpolated to the candidate's time, and the
  // candidate; the run-level variance their rounds carry.
  std::vector<double> reference;
  std::vector<double> values;
  std::vector<std::string> requests;
  double level_factor = 0;
  Measurement before = m_incumbent;
  Measurement last;
  for (int round = 0; round < std::max(1, m_options.max_rounds); ++round) {
    auto measured = run_of(candidate.settings, result.cost, halt);
    if (!measured) {
      break;
    }
    last = *measured;
    ++result.rounds;
    requests.insert(requests.end(), measured->requests.begin(), measured->requests.end());
    values.insert(values.end(), measured->values.begin(), measured->values.end());
    if (round == 0) {
      // Worse beyond the noise against the incumbent's run before alone (two runs' levels and
      // the drift between them counted): no run after it is needed to reject it.
      const bench::PairedComparison alone = bench::compare_paired(
          before.values, measured->values, higher, confidence, 2 * m_noise.variance());
      if (alone.verdict == bench::Verdict::worse) {
        reference = before.values;
        level_factor = 2;
        break;
      }
    }
    auto after = run_of(candidate.incumbent, result.cost, halt);
    if (!after) {
      break;
    }
    const double w = bench::interpolation_weight(before.at_s, after->at_s, measured->at_s);
    const std::vector<double> ref = bench::interpolate_reference(before.values, after->values, w);
    reference.insert(reference.end(), ref.begin(), ref.end());
    level_factor += bench::reference_level_factor(w);
    result.drift = bench::compare_paired(before.values, after->values, higher, confidence,
                                         2 * m_noise.variance());
    m_noise.add(before.values, after->values);
    result.after = *after;
    m_incumbent = *after;
    m_incumbent_chosen = false;
    before = std::move(*after);
    const double rounds = result.rounds;
    result.against = bench::compare_paired(reference, values, higher, confidence,
                                           m_noise.variance() * level_factor / (rounds * rounds));
    if (result.against.verdict != bench::Verdict::no_significant_difference ||
        !promising(result.against, higher)) {
      break;
    }
    // Undecided, but it may be worth keeping: another round of both, when it fits the budget.
    if (!m_budget.fits(elapsed(), round_cost(result.mode == ApplyMode::restart),
                       final_cost().value_or(0))) {
      break;
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
  if (!result.after) {  // rejected against the run before alone
    result.against = bench::compare_paired(reference, values, higher, confidence,
                                           m_noise.variance() * level_factor);
  }
  result.measured = make_measurement(candidate.settings, std::move(requests), std::move(values));
  result.measured.at_s = last.at_s;
  result.outcome =
      result.against.verdict == bench::Verdict::better ? Outcome::better : Outcome::not_better;
  const CandidateResult& kept = record(std::move(result));
  if (kept.outcome == Outcome::better) {
    m_incumbent = last;  // its latest run, the one that chose it
    m_incumbent_chosen = true;
  }
  if (!m_costs_said) {
    m_costs_said = true;
    emit(TuneEventKind::costs_known);
  }
  return std::nullopt;
}

std::optional<Halt> TuneLoop::final_comparison() {
  TuneResult& r = m_run.result;
  const nlohmann::json best = m_search->incumbent();
  CandidateCost cost;
  std::optional<Halt> halt;
  if (m_incumbent_chosen || m_incumbent_stale) {
    // The run that chose the winner is its best draw of the noise: a fresh one is compared.
    emit(TuneEventKind::remeasure);
    auto again = run_of(best, cost, halt);
    if (!again) {
      return halt;
    }
    m_incumbent = std::move(*again);
    m_incumbent_chosen = m_incumbent_stale = false;
  }
  r.winner = m_incumbent;
  emit(TuneEventKind::restoring);
  auto start = run_of(m_options.start, cost, halt);
  if (!start) {
    return halt;
  }
  r.start_again = *start;
  r.gain = bench::compare_paired(start->values, r.winner.values, r.higher_is_better,
                                 m_options.confidence, 2 * m_noise.variance());
  return std::nullopt;
}

void TuneLoop::finish(std::optional<Halt> halt) {
  TuneResult& r = m_run.result;
  r.winner = m_incumbent;
  if (!halt && m_run.measured_start && m_search->incumbent() != r.start.settings) {
    halt = final_comparison();
  }
  if (halt) {
    r.stopped = halt->reason;
    m_run.error = halt->error;
  }
  if (m_run.measured_start && !r.start_again) {
    // No final comparison: the winner's last run against the start's first (not a verdict to
    // save on).
    r.gain = bench::compare_paired(r.start.values, r.winner.values, r.higher_is_better,
                                   m_options.confidence, 2 * m_noise.variance());
  }
  // The start's latest run against its first: the drift over the tune.
  const Measurement* start_latest = r.start_again                                ? &*r.start_again
                                    : winner_is_start(r) && m_run.measured_start ? &r.winner
                                                                                 : nullptr;
  if (start_latest != nullptr && start_latest->at_s > r.start.at_s) {
    r.drift = bench::compare_paired(r.start.values, start_latest->values, r.higher_is_better,
                                    m_options.confidence, 2 * m_noise.variance());
  }
  r.run_noise_sd = std::sqrt(m_noise.variance());
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
  r.elapsed_s = elapsed();
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
    // A candidate starts only when its first round and the final comparison fit what is left.
    const bool restart = needs_restart(next->settings) || m_incumbent_stale;
    if (!m_budget.fits(elapsed(), round_cost(restart), final_cost().value_or(0))) {
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
