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

// The running cost model: the mean cost of a restart and of one sample so far.
class TuneBudget {
 public:
  // `budget_s` the whole tune's time (--budget), > 0 (else std::invalid_argument: a bug; the
  // CLI checks --budget with parse_duration_s).
  explicit TuneBudget(double budget_s);

  // Adds a measured candidate: its restart and warm-up count as one restart when restart_s > 0
  // (a per-request candidate restarts nothing), its samples as samples.
  void add(const CandidateCost& cost);
  // Adds one restart (stop, start, ready) of `seconds`.
  void add_restart(double seconds);
  // Adds one run of the workload: `seconds` for `samples` measured requests, warm-up included.
  void add_run(double seconds, int samples);

  double budget_s() const { return m_budget_s; }
  // Mean restart+warm-up seconds, and mean seconds per sample; nullopt before the first.
  std::optional<double> restart_s() const;
  std::optional<double> sample_s() const;

  // The expected cost of one more candidate with `samples` samples (restart or not), nullopt
  // before the first candidate was measured (and for a restart before the first restart).
  std::optional<double> candidate_s(int samples, bool restart) const;

  // How many more such candidates fit in what is left after `elapsed_s`, keeping room for the
  // final re-measure of the incumbent (one more candidate); nullopt before the first.
  std::optional<int> candidates_left(double elapsed_s, int samples, bool restart) const;

  // Whether one more candidate may start at `elapsed_s`: before the first always; after, only
  // when its expected cost plus the final re-measure end within the budget.
  bool may_start(double elapsed_s, int samples, bool restart) const;

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
