#include "gb10tune/bench/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace gb10tune::bench {

SampleStats summarize(std::span<const double> values) {
  SampleStats stats;
  if (values.empty()) {
    return stats;
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  stats.count = static_cast<int>(n);
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double squares = 0;
    for (double v : sorted) {
      squares += (v - stats.mean) * (v - stats.mean);
    }
    stats.stddev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  stats.cv = stats.mean != 0 ? stats.stddev / stats.mean : 0;
  return stats;
}

}  // namespace gb10tune::bench
