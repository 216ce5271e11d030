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

namespace {

double median_of_sorted(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

}  // namespace

MedianInterval median_interval(std::span<const double> values, double confidence) {
  MedianInterval interval;
  if (values.empty()) {
    return interval;
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double tail_budget = (1.0 - confidence) / 2.0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  // x(j) lies above the median when fewer than j values do: P(Bin(n, 1/2) <= j - 1).
  std::size_t j = 1;
  double below = std::exp(log_half_n);  // P(Bin(n, 1/2) <= 0)
  double cumulative = below;
  for (std::size_t k = 1; k < (n + 1) / 2; ++k) {
    const double log_pmf = std::lgamma(static_cast<double>(n) + 1) -
                           std::lgamma(static_cast<double>(k) + 1) -
                           std::lgamma(static_cast<double>(n - k) + 1) + log_half_n;
    cumulative += std::exp(log_pmf);
    if (cumulative > tail_budget) {
      break;
    }
    j = k + 1;
    below = cumulative;
  }
  interval.low = sorted[j - 1];
  interval.high = sorted[n - j];
  interval.confidence = 1.0 - 2.0 * below;
  return interval;
}

double median_absolute_deviation(std::span<const double> values) {
  if (values.size() < 2) {
    return 0;
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const double median = median_of_sorted(sorted);
  std::vector<double> deviations;
  deviations.reserve(sorted.size());
  for (double v : sorted) {
    deviations.push_back(std::fabs(v - median));
  }
  std::sort(deviations.begin(), deviations.end());
  return median_of_sorted(deviations);
}

}  // namespace gb10tune::bench
