// The warm-up steadiness rule (include/gb10tune/kernels/warmup.hpp).
#include "gb10tune/kernels/warmup.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace gb10tune::kernels {

WarmupRule steady_warmup_rule(int min_runs) {
  WarmupRule rule;
  rule.min_runs = std::max(min_runs, 0);
  rule.max_runs = std::max(rule.max_runs, rule.min_runs);
  return rule;
}

WarmupRule fixed_warmup_rule(int runs) {
  WarmupRule rule;
  rule.min_runs = std::max(runs, 0);
  rule.window = 0;
  rule.min_seconds = 0;
  rule.max_runs = rule.min_runs;
  return rule;
}

std::optional<double> last_spread(const std::vector<double>& run_seconds, int window) {
  if (window <= 0 || run_seconds.size() < static_cast<std::size_t>(window)) {
    return std::nullopt;
  }
  const auto first = run_seconds.end() - window;
  const auto [fastest, slowest] = std::minmax_element(first, run_seconds.end());
  if (*fastest <= 0) {
    return std::nullopt;
  }
  return *slowest / *fastest - 1.0;
}

namespace {

// GPU time of the runs after the first: the first carries one-off costs (page migration of
// managed memory, first touch), which neither warm the GPU up nor should end its warm-up.
double seconds_after_first(const std::vector<double>& run_seconds) {
  return run_seconds.size() < 2 ? 0.0
                                : std::accumulate(run_seconds.begin() + 1, run_seconds.end(), 0.0);
}

}  // namespace

WarmupState warmup_state(const std::vector<double>& run_seconds, const WarmupRule& rule) {
  const auto runs = static_cast<int>(run_seconds.size());
  if (runs < rule.min_runs) {
    return WarmupState::more;
  }
  if (rule.window <= 0) {
    return WarmupState::settled;
  }
  const double total = seconds_after_first(run_seconds);
  const std::optional<double> spread = last_spread(run_seconds, rule.window);
  if (spread && *spread <= rule.tolerance && total >= rule.min_seconds) {
    return WarmupState::settled;
  }
  if (runs >= rule.max_runs || total >= rule.max_seconds) {
    return WarmupState::limit;
  }
  return WarmupState::more;
}

std::string describe_unsettled(const std::vector<double>& run_seconds, const WarmupRule& rule) {
  if (warmup_state(run_seconds, rule) != WarmupState::limit) {
    return "";
  }
  char text[160];
  const std::optional<double> spread = last_spread(run_seconds, rule.window);
  if (spread && *spread <= rule.tolerance) {
    std::snprintf(text, sizeof text,
                  "%zu untimed runs agree but took %.1f ms after the first, less than the %.0f "
                  "ms asked",
                  run_seconds.size(), 1e3 * seconds_after_first(run_seconds),
                  1e3 * rule.min_seconds);
  } else if (spread) {
    std::snprintf(text, sizeof text,
                  "the last %d of %zu untimed runs still vary by %.1f%% (settled means within "
                  "%.0f%%)",
                  rule.window, run_seconds.size(), 100.0 * *spread, 100.0 * rule.tolerance);
  } else {
    std::snprintf(text, sizeof text, "%zu untimed runs were too few to judge", run_seconds.size());
  }
  return text;
}

}  // namespace gb10tune::kernels
