// Summary statistics of repeated measurements.
#pragma once

#include <span>

namespace gb10tune::bench {

struct SampleStats {
  int count = 0;
  double median = 0;  // the primary figure: robust to a stray slow sample
  double min = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n − 1); 0 for one sample
  double cv = 0;      // coefficient of variation: stddev / mean; 0 when mean is 0
};

// Summarizes `values`; an empty span gives count 0 and zeros.
SampleStats summarize(std::span<const double> values);

// A distribution-free confidence interval of the median: order statistics x(j) and x(n+1-j)
// (1-based, sorted), with j the largest index whose binomial tail P(Bin(n, 1/2) < j) stays
// within (1 - confidence) / 2. Few samples cannot reach the asked level: the interval is then
// [min, max] and `confidence` says what it really covers (n = 5: 93.75%).
struct MedianInterval {
  double low = 0;
  double high = 0;
  double confidence = 0;  // the interval's actual coverage, at least the one asked where possible
};

// The interval for `values` at `confidence` (0 < confidence < 1); all zeros for an empty span.
MedianInterval median_interval(std::span<const double> values, double confidence = 0.95);

// The median absolute deviation from the median (unscaled); 0 for fewer than two values.
double median_absolute_deviation(std::span<const double> values);

}  // namespace gb10tune::bench
