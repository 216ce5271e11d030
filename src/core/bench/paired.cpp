#include "gb10tune/bench/paired.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "gb10tune/util/json_field.hpp"

namespace gb10tune::bench {

namespace {

// The continued fraction of the regularized incomplete beta function I_x(a, b) (modified Lentz),
// which converges quickly for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-15;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
  double h = d;
  const auto step = [&](double term) {
    d = 1 + term * d;
    d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
    c = 1 + term / c;
    c = std::fabs(c) < kTiny ? kTiny : c;
    h *= d * c;
    return d * c;
  };
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    step(m * (b - m) * x / ((a + m2 - 1) * (a + m2)));
    const double last = step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)));
    if (std::fabs(last - 1) < kEpsilon) {
      break;
    }
  }
  return h;
}

// I_x(a, b) for 0 <= x <= 1, a, b > 0.
double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) {
    return 0;
  }
  if (x >= 1) {
    return 1;
  }
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) {
    return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  }
  return 1 - std::exp(log_front) * beta_continued_fraction(b, a, 1 - x) / b;
}

// P(T <= t) for Student's t with `dof` degrees of freedom, t >= 0.
double student_t_upper_cdf(double t, double dof) {
  return 1 - 0.5 * regularized_incomplete_beta(dof / 2, 0.5, dof / (dof + t * t));
}

// The x in [low, high] where the increasing `cdf` reaches `p`, by bisection to the last bit.
template <class Cdf>
double invert_increasing(const Cdf& cdf, double p, double low, double high) {
  for (int i = 0; i < 200 && high - low > 1e-14 * std::fmax(1.0, std::fabs(high)); ++i) {
    const double mid = (low + high) / 2;
    (cdf(mid) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

// The standard normal quantile of `p` (0 < p < 1).
double normal_quantile(double p) {
  const auto cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  return invert_increasing(cdf, p, -40, 40);
}

}  // namespace

double student_t_quantile(double confidence, int dof) {
  if (!(confidence > 0 && confidence < 1) || dof < 1) {
    throw std::invalid_argument("student_t_quantile: confidence in (0, 1) and dof >= 1");
  }
  const double p = (1 + confidence) / 2;
  const auto cdf = [dof](double t) { return student_t_upper_cdf(t, dof); };
  double high = 1;
  while (cdf(high) < p && high < 1e12) {
    high *= 2;
  }
  return invert_increasing(cdf, p, 0, high);
}

int pairs_needed(double log_ratio_sd, double relative_difference, double confidence, double power) {
  if (log_ratio_sd <= 0) {
    return kMinPairsForVerdict;
  }
  const double effect = std::fabs(std::log1p(relative_difference));
  if (effect == 0 || !std::isfinite(effect)) {
    return std::numeric_limits<int>::max();  // no difference can be found
  }
  const double z_sum = normal_quantile((1 + confidence) / 2) + normal_quantile(power);
  const double n = std::ceil(std::pow(z_sum * log_ratio_sd / effect, 2) - 1e-9);
  if (n >= static_cast<double>(std::numeric_limits<int>::max())) {
    return std::numeric_limits<int>::max();
  }
  return std::max(kMinPairsForVerdict, static_cast<int>(n));
}

PairedComparison compare_paired(std::span<const double> a, std::span<const double> b,
                                bool higher_is_better, double confidence, double level_var) {
  PairedComparison out;
  out.confidence = confidence;
  level_var = std::isfinite(level_var) && level_var > 0 ? level_var : 0;
  out.level_sd = std::sqrt(level_var);
  if (a.size() != b.size()) {
    return out;
  }
  std::vector<double> logs;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] > 0 && b[i] > 0 && std::isfinite(a[i]) && std::isfinite(b[i])) {
      logs.push_back(std::log(b[i] / a[i]));
    }
  }
  out.pairs = static_cast<int>(logs.size());
  if (logs.empty()) {
    return out;  // not comparable: no pair has both values
  }
  double mean = 0;
  for (const double v : logs) {
    mean += v;
  }
  mean /= static_cast<double>(logs.size());
  out.ratio = out.ratio_low = out.ratio_high = std::exp(mean);
  if (out.pairs < 2) {
    out.verdict = Verdict::too_few_samples;
    return out;
  }
  double squares = 0;
  for (const double v : logs) {
    squares += (v - mean) * (v - mean);
  }
  out.log_ratio_sd = std::sqrt(squares / (out.pairs - 1));
  const double half =
      student_t_quantile(confidence, out.pairs - 1) *
      std::sqrt(out.log_ratio_sd * out.log_ratio_sd / static_cast<double>(out.pairs) + level_var);
  out.ratio_low = std::exp(mean - half);
  out.ratio_high = std::exp(mean + half);
  out.pairs_for_3_percent = pairs_needed(out.log_ratio_sd, 0.03, confidence);
  const bool above = out.ratio_low > 1;
  const bool below = out.ratio_high < 1;
  if (out.pairs < kMinPairsForVerdict) {
    out.verdict = Verdict::too_few_samples;
  } else if (!above && !below) {
    out.verdict = Verdict::no_significant_difference;
  } else {
    out.verdict = above == higher_is_better ? Verdict::better : Verdict::worse;
  }
  return out;
}

nlohmann::json paired_to_json(const PairedComparison& paired) {
  return {{"pairs", paired.pairs},
          {"ratio", paired.ratio},
          {"ratio_low", paired.ratio_low},
          {"ratio_high", paired.ratio_high},
          {"confidence", paired.confidence},
          {"log_ratio_sd", paired.log_ratio_sd},
          {"level_sd", paired.level_sd},
          {"verdict", to_string(paired.verdict)},
          {"pairs_for_3_percent", paired.pairs_for_3_percent
                                      ? nlohmann::json(*paired.pairs_for_3_percent)
                                      : nlohmann::json(nullptr)}};
}

bool paired_from_json(const nlohmann::json& doc, PairedComparison& paired, std::string& error) {
  std::string verdict;
  if (!get_field(doc, "pairs", paired.pairs, error) ||
      !get_field(doc, "ratio", paired.ratio, error) ||
      !get_field(doc, "ratio_low", paired.ratio_low, error) ||
      !get_field(doc, "ratio_high", paired.ratio_high, error) ||
      !get_field(doc, "confidence", paired.confidence, error) ||
      !get_field(doc, "log_ratio_sd", paired.log_ratio_sd, error) ||
      !get_field(doc, "verdict", verdict, error)) {
    return false;
  }
  const auto parsed = parse_verdict(verdict);
  if (!parsed) {
    error = "field 'verdict' is not a verdict ('" + verdict + "')";
    return false;
  }
  paired.verdict = *parsed;
  const auto level = doc.find("level_sd");  // absent in journals before it was counted
  paired.level_sd = level != doc.end() && level->is_number() ? level->get<double>() : 0.0;
  paired.pairs_for_3_percent.reset();
  if (const auto it = doc.find("pairs_for_3_percent"); it != doc.end() && !it->is_null()) {
    if (!it->is_number_integer()) {
      error = "field 'pairs_for_3_percent' has the wrong type";
      return false;
    }
    paired.pairs_for_3_percent = it->get<int>();
  }
  return true;
}

}  // namespace gb10tune::bench
