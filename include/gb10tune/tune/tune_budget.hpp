// Time: what a candidate costs (a restart and its warm-up, the measured samples) once the first
// one has been measured, how many of those still fit in the budget, and the ETA.
#pragma once

#include <optional>
#include <string_view>

namespace gb10tune::tune {

// What one candidate cost, as measured.
struct CandidateCost {
  double restart_s = 0;  // stop + start + ready; 0 for a per-request knob
  double warmup_s = 0;   // the discarded warm-up requests
  double samples_s = 0;  // the measured requests
  int samples = 0;
};

// The running cost model: the mean cost of a restart and of one measured request so far, and
// from them what a candidate's round and the final comparison are expected to cost.
class TuneBudget {
 public:
  // `budget_s` the whole tune's time (--budget), > 0 (else std::invalid_argument: a bug; the
  // CLI checks --budget with parse_duration_s).
  explicit TuneBudget(double budget_s);

  // Adds one restart (stop, start, ready) of `seconds`.
  void add_restart(double seconds);
  // Adds one run of the workload: `seconds` for `samples` measured requests, warm-up included.
  void add_run(double seconds, int samples);

  double budget_s() const { return m_budget_s; }
  // Mean restart seconds, and mean seconds per measured request; nullopt before the first.
  std::optional<double> restart_s() const;
  std::optional<double> sample_s() const;

  // A candidate's round: a run of it and one of the incumbent, each of `samples` requests, and
  // two restarts when it restarts (a restart not measured yet counts 0); nullopt before any run.
  std::optional<double> round_s(int samples, bool restart) const;
  // The final comparison: the original's run after its restart (the one the bound allows over),
  // and a fresh run of the winner after a restart when `fresh_winner`; nullopt before any run.
  std::optional<double> final_s(int samples, bool fresh_winner) const;

  // Whether work expected to cost `cost_s` (nullopt: not known yet, it may start) may start at
  // `elapsed_s` and still leave `reserve_s` of the budget.
  bool fits(double elapsed_s, std::optional<double> cost_s, double reserve_s) const;

 private:
  double m_budget_s;
  double m_restart_total_s = 0;
  int m_restarts = 0;
  double m_sample_total_s = 0;
  int m_samples = 0;
};

// Parses a duration ("20m", "90s", "1h", "1h30m", a bare number of seconds); nullopt when it is
// not one or is not > 0.
std::optional<double> parse_duration_s(std::string_view text);

}  // namespace gb10tune::tune
