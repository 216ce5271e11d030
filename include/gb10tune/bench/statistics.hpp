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

}  // namespace gb10tune::bench
