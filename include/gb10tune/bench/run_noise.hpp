// The noise a paired comparison cannot see in its own pairs: a server whose speed drifts or
// jitters from one run to the next moves every request of a run together. Three tools for it:
// a reference interpolated in time between two runs of the same configuration (a linear drift
// cancels), an estimate of the run-to-run variance from repeated runs of one configuration, and
// the wander of a single comparison's ratios over time (for two runs nothing else measured).
#pragma once

#include <span>
#include <vector>

namespace gb10tune::bench {

// The weight of `after` in a reference for a run taken at `at_s` between `before_s` and
// `after_s` (each a run's middle, seconds): (at - before) / (after - before), clamped to [0, 1];
// 0.5 when the two runs were taken at the same time.
double interpolation_weight(double before_s, double after_s, double at_s);

// Per-request reference at weight `w`: exp((1 - w) ln before_i + w ln after_i); where one of the
// two is not > 0 the other's value; 0 where neither is. The spans must have equal sizes (else
// an empty vector).
std::vector<double> interpolate_reference(std::span<const double> before,
                                          std::span<const double> after, double w);

// How many run-level variances a comparison against that reference carries: the candidate's
// own run (1) and the reference's two runs weighted ((1 - w)² + w²). 2 for a single run (w 0).
double reference_level_factor(double w);

// The run-to-run variance of one server's level (log scale), from re-measurements of the same
// configuration: each adds the square of its level shift less the pairs' share of it, halved
// (a shift is the difference of two runs). A prior of `prior_sd` counted as `prior_weight`
// runs keeps the first estimates from reading 0 by chance.
class RunNoise {
 public:
  explicit RunNoise(double prior_sd = 0.01, double prior_weight = 1);
  // One configuration run again: `later` against `earlier`, paired by request.
  void add(std::span<const double> earlier, std::span<const double> later);
  // The same from a level shift already computed: its mean log ratio and the pairs' variance of
  // that mean (sd² / n).
  void add_shift(double shift, double pairs_share);
  // The estimate (>= 0).
  double variance() const;
  // Re-measurements added.
  int count() const { return m_count; }

 private:
  double m_prior_sum;
  double m_weight;
  double m_sum = 0;
  int m_count = 0;
};

// The level wander of one paired comparison: the ratios b_i / a_i in time order split into
// `blocks` runs of consecutive pairs, the variance of their mean logs beyond what the pairs'
// own spread explains (>= 0; 0 with fewer than two pairs a block). bench compare counts it as
// the run-level variance of two runs it cannot repeat.
double block_wander_variance(std::span<const double> a, std::span<const double> b, int blocks = 4);

}  // namespace gb10tune::bench
