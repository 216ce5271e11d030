#include "gb10tune/bench/run_noise.hpp"

#include <algorithm>
#include <cmath>

namespace gb10tune::bench {

namespace {

// ln(b_i / a_i) of the pairs where both are > 0, in order.
std::vector<double> log_ratios(std::span<const double> a, std::span<const double> b) {
  std::vector<double> logs;
  if (a.size() != b.size()) {
    return logs;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] > 0 && b[i] > 0 && std::isfinite(a[i]) && std::isfinite(b[i])) {
      logs.push_back(std::log(b[i] / a[i]));
    }
  }
  return logs;
}

double mean_of(std::span<const double> values) {
  double sum = 0;
  for (const double v : values) {
    sum += v;
  }
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// Sum of squared deviations from the mean.
double squares_of(std::span<const double> values) {
  const double mean = mean_of(values);
  double sum = 0;
  for (const double v : values) {
    sum += (v - mean) * (v - mean);
  }
  return sum;
}

}  // namespace

double interpolation_weight(double before_s, double after_s, double at_s) {
  const double span = after_s - before_s;
  if (!(std::fabs(span) > 1e-9)) {
    return 0.5;
  }
  return std::clamp((at_s - before_s) / span, 0.0, 1.0);
}

std::vector<double> interpolate_reference(std::span<const double> before,
                                          std::span<const double> after, double w) {
  std::vector<double> reference;
  if (before.size() != after.size()) {
    return reference;
  }
  reference.reserve(before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    const bool have_before = before[i] > 0 && std::isfinite(before[i]);
    const bool have_after = after[i] > 0 && std::isfinite(after[i]);
    if (have_before && have_after) {
      reference.push_back(std::exp((1 - w) * std::log(before[i]) + w * std::log(after[i])));
    } else {
      reference.push_back(have_before ? before[i] : have_after ? after[i] : 0.0);
    }
  }
  return reference;
}

double reference_level_factor(double w) {
  return 1 + (1 - w) * (1 - w) + w * w;
}

RunNoise::RunNoise(double prior_sd, double prior_weight)
    : m_prior_sum(prior_sd * prior_sd * prior_weight), m_weight(prior_weight) {}

void RunNoise::add(std::span<const double> earlier, std::span<const double> later) {
  const std::vector<double> logs = log_ratios(earlier, later);
  if (logs.size() < 2) {
    return;
  }
  const double n = static_cast<double>(logs.size());
  const double shift = mean_of(logs);
  add_shift(shift, squares_of(logs) / (n - 1) / n);
}

void RunNoise::add_shift(double shift, double pairs_share) {
  if (!std::isfinite(shift) || !std::isfinite(pairs_share)) {
    return;
  }
  m_sum += (shift * shift - pairs_share) / 2;
  ++m_count;
}

double RunNoise::variance() const {
  return std::max(0.0, (m_prior_sum + m_sum) / (m_weight + m_count));
}

double block_wander_variance(std::span<const double> a, std::span<const double> b, int blocks) {
  const std::vector<double> logs = log_ratios(a, b);
  if (blocks < 2 || logs.size() < 2 * static_cast<std::size_t>(blocks)) {
    return 0;
  }
  // Blocks of consecutive pairs, the first ones one longer where the count does not divide.
  std::vector<double> means;
  double within = 0;
  double inverse_sizes = 0;
  std::size_t begin = 0;
  for (int k = 0; k < blocks; ++k) {
    const std::size_t size =
        logs.size() / blocks + (static_cast<std::size_t>(k) < logs.size() % blocks ? 1 : 0);
    const std::span<const double> block(logs.data() + begin, size);
    means.push_back(mean_of(block));
    within += squares_of(block);
    inverse_sizes += 1.0 / static_cast<double>(size);
    begin += size;
  }
  const double within_var = within / static_cast<double>(logs.size() - blocks);
  const double between_var = squares_of(means) / (blocks - 1);
  return std::max(0.0, between_var - within_var * inverse_sizes / blocks);
}

}  // namespace gb10tune::bench
