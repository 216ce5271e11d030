#include "gb10tune/bench/paired.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "gb10tune/bench/compare.hpp"
#include "gb10tune/bench/server_metrics.hpp"
#include "gb10tune/bench/statistics.hpp"

namespace gb10tune::bench {
namespace {

TEST(StudentTQuantile, MatchesPublishedValues) {
  // Two-sided 95%: t(0.975, dof) from any table.
  EXPECT_NEAR(student_t_quantile(0.95, 1), 12.706, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.95, 2), 4.303, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.95, 4), 2.776, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.95, 7), 2.365, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.95, 30), 2.042, 5e-4);
  // Other levels: t(0.995, 10), t(0.95, 7), t(0.75, 3).
  EXPECT_NEAR(student_t_quantile(0.99, 10), 3.169, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.90, 7), 1.895, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.50, 3), 0.765, 5e-4);
  // Closed forms: dof 1 is the Cauchy distribution (tan); dof 2: t = (2p − 1) / sqrt(2p (1 − p)).
  const double pi = std::acos(-1.0);
  EXPECT_NEAR(student_t_quantile(0.8, 1), std::tan(pi * 0.4), 1e-9);
  const double p = 0.975;
  EXPECT_NEAR(student_t_quantile(0.95, 2), (2 * p - 1) / std::sqrt(2 * p * (1 - p)), 1e-9);
  // Many degrees of freedom: the normal quantile.
  EXPECT_NEAR(student_t_quantile(0.95, 1000000), 1.959964, 1e-5);
}

TEST(StudentTQuantile, RefusesWhatIsNoQuantile) {
  EXPECT_THROW(student_t_quantile(0.95, 0), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(1.0, 3), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(0.0, 3), std::invalid_argument);
}

TEST(ComparePaired, GeometricMeanRatioWithStudentInterval) {
  // Ratios 1.1, 1.05, 1.1: logs 0.09531, 0.04879, 0.09531; mean 0.07980, sd 0.026858;
  // half-width t(0.975, 2) · sd / sqrt(3) = 4.30265 · 0.015507 = 0.066720.
  const std::vector<double> a{100, 200, 400};
  const std::vector<double> b{110, 210, 440};
  const PairedComparison up = compare_paired(a, b, true);
  EXPECT_EQ(up.pairs, 3);
  EXPECT_NEAR(up.ratio, 1.0830742, 1e-6);
  EXPECT_NEAR(up.ratio_low, 1.0131696, 1e-6);
  EXPECT_NEAR(up.ratio_high, 1.1578019, 1e-6);
  EXPECT_NEAR(up.log_ratio_sd, 0.0268583, 1e-6);
  EXPECT_EQ(up.confidence, 0.95);
  EXPECT_EQ(up.verdict, Verdict::better);
  ASSERT_TRUE(up.pairs_for_3_percent);
  EXPECT_EQ(*up.pairs_for_3_percent, pairs_needed(up.log_ratio_sd, 0.03));
  // The same figures for a metric where lower is better: worse. Swapped: the inverse ratio.
  EXPECT_EQ(compare_paired(a, b, false).verdict, Verdict::worse);
  const PairedComparison down = compare_paired(b, a, true);
  EXPECT_NEAR(down.ratio, 1 / up.ratio, 1e-12);
  EXPECT_NEAR(down.ratio_low, 1 / up.ratio_high, 1e-12);
  EXPECT_EQ(down.verdict, Verdict::worse);
  // A wider confidence: a wider interval (t(0.995, 2) = 9.925), which now holds 1.
  const PairedComparison wide = compare_paired(a, b, true, 0.99);
  EXPECT_LT(wide.ratio_low, 1);
  EXPECT_EQ(wide.verdict, Verdict::no_significant_difference);
}

TEST(ComparePaired, PairsWithoutBothValuesAndShortInputs) {
  // Pairs with a value <= 0 (not reported) are left out: 2 pairs remain, too few.
  const PairedComparison two = compare_paired(std::vector<double>{100, 0, 200, 50},
                                              std::vector<double>{120, 90, 240, 0}, true);
  EXPECT_EQ(two.pairs, 2);
  EXPECT_NEAR(two.ratio, 1.2, 1e-12);
  EXPECT_EQ(two.verdict, Verdict::too_few_samples);
  const PairedComparison one =
      compare_paired(std::vector<double>{100}, std::vector<double>{150}, true);
  EXPECT_EQ(one.pairs, 1);
  EXPECT_EQ(one.verdict, Verdict::too_few_samples);
  EXPECT_FALSE(one.pairs_for_3_percent);
  // Different lengths, or no pair at all: not comparable.
  EXPECT_EQ(compare_paired(std::vector<double>{1, 2}, std::vector<double>{1}, true).verdict,
            Verdict::not_comparable);
  EXPECT_EQ(compare_paired(std::vector<double>{0, 0}, std::vector<double>{1, 1}, true).verdict,
            Verdict::not_comparable);
  // A run against itself: ratio 1, no noise, no difference.
  const std::vector<double> same{130, 250, 310, 140};
  const PairedComparison self = compare_paired(same, same, true);
  EXPECT_EQ(self.ratio, 1);
  EXPECT_EQ(self.ratio_low, 1);
  EXPECT_EQ(self.ratio_high, 1);
  EXPECT_EQ(self.log_ratio_sd, 0);
  EXPECT_EQ(self.verdict, Verdict::no_significant_difference);
  EXPECT_EQ(self.pairs_for_3_percent, kMinPairsForVerdict);
}

TEST(PairsNeeded, NormalApproximationByHand) {
  // ((z_0.975 + z_0.8) · sd / ln 1.03)², z_0.975 = 1.959964, z_0.8 = 0.841621, ln 1.03 = 0.029559:
  // sd 0.02 → 3.593 → 4; sd 0.05 → 22.46 → 23; sd 0.10 → 89.83 → 90.
  EXPECT_EQ(pairs_needed(0.02, 0.03), 4);
  EXPECT_EQ(pairs_needed(0.05, 0.03), 23);
  EXPECT_EQ(pairs_needed(0.10, 0.03), 90);
  // 90% power: z_0.9 = 1.281552 → ((3.241516 · 0.1) / 0.029559)² = 120.26 → 121.
  EXPECT_EQ(pairs_needed(0.10, 0.03, 0.95, 0.9), 121);
  // Never fewer than a verdict needs; no noise needs the minimum.
  EXPECT_EQ(pairs_needed(0.001, 0.03), kMinPairsForVerdict);
  EXPECT_EQ(pairs_needed(0, 0.03), kMinPairsForVerdict);
  // A slowdown of 3% is as hard to find as a speedup of ~3%.
  EXPECT_NEAR(pairs_needed(0.10, -0.03), 90, 6);
}

TEST(ComparePaired, JsonRoundTrip) {
  const PairedComparison p =
      compare_paired(std::vector<double>{100, 200, 400}, std::vector<double>{110, 210, 440}, true);
  PairedComparison back;
  std::string error;
  ASSERT_TRUE(paired_from_json(paired_to_json(p), back, error)) << error;
  EXPECT_EQ(paired_to_json(back), paired_to_json(p));
  EXPECT_EQ(back.verdict, Verdict::better);
  nlohmann::json broken = paired_to_json(p);
  broken["verdict"] = "maybe";
  EXPECT_FALSE(paired_from_json(broken, back, error));
  EXPECT_NE(error.find("verdict"), std::string::npos) << error;
  broken.erase("verdict");
  EXPECT_FALSE(paired_from_json(broken, back, error));
}

// --- power and error rate, simulated ----------------------------------------------------------
// Own uniform and normal draws from mt19937_64's raw output, which the standard fixes: the
// standard library's distributions differ between implementations, and a fixed seed must give
// the same trials everywhere.

double paired_uniform(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

double paired_gaussian(std::mt19937_64& rng) {
  const double u = paired_uniform(rng);
  const double v = paired_uniform(rng);
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * std::acos(-1.0) * v);
}

// The multi-turn workload's spread: 8 requests whose decode rates span 130–310 t/s, short and
// long contexts (CV ~37%, as bench server measured on the real CPU server).
const std::vector<double> kPairedRequestRates{130, 135, 140, 160, 250, 290, 300, 310};

// One configuration measured on every request: its rate × `speed`, with `noise` relative
// per-request noise (log-normal).
std::vector<double> paired_measure(std::mt19937_64& rng, double speed, double noise) {
  std::vector<double> values;
  for (const double rate : kPairedRequestRates) {
    values.push_back(rate * speed * std::exp(noise * paired_gaussian(rng)));
  }
  return values;
}

struct PairedTrialCounts {
  int paired_better = 0;
  int paired_verdicts = 0;  // better or worse
  int unpaired_better = 0;
};

PairedTrialCounts paired_trials(std::uint64_t seed, int trials, double speed) {
  std::mt19937_64 rng(seed);
  PairedTrialCounts counts;
  for (int i = 0; i < trials; ++i) {
    const std::vector<double> a = paired_measure(rng, 1.0, 0.02);
    const std::vector<double> b = paired_measure(rng, speed, 0.02);
    const Verdict paired = compare_paired(a, b, true).verdict;
    counts.paired_better += paired == Verdict::better ? 1 : 0;
    counts.paired_verdicts += paired == Verdict::better || paired == Verdict::worse ? 1 : 0;
    const Verdict unpaired = judge(summarize_metric(Metric::decode_tps, a),
                                   summarize_metric(Metric::decode_tps, b), true);
    counts.unpaired_better += unpaired == Verdict::better ? 1 : 0;
  }
  return counts;
}

TEST(ComparePairedSimulation, TheWorkloadSpreadIsTheMultiTurnOne) {
  const SampleStats stats = summarize(kPairedRequestRates);
  EXPECT_EQ(stats.min, 130);
  EXPECT_EQ(stats.max, 310);
  EXPECT_NEAR(stats.cv, 0.35, 0.03);
}

TEST(ComparePairedSimulation, FindsFivePercentWithEightPairsWhereMediansCannot) {
  const PairedTrialCounts counts = paired_trials(20261202, 200, 1.05);
  // Power: the paired test finds a 5% speedup in at least 95% of the trials …
  EXPECT_GE(counts.paired_better, 190) << counts.paired_better << " of 200";
  // … the medians' intervals of the same measurements (bench compare's unpaired rule) almost
  // never separate: the requests' spread (130–310) swamps 5%.
  EXPECT_LE(counts.unpaired_better, 10) << counts.unpaired_better << " of 200";
}

TEST(ComparePairedSimulation, EqualConfigurationsRarelyDiffer) {
  const PairedTrialCounts counts = paired_trials(7, 400, 1.0);
  // At 95% confidence about 5% of the trials call a difference by chance; at most ~7%.
  EXPECT_LE(counts.paired_verdicts, 28) << counts.paired_verdicts << " of 400";
  EXPECT_GE(counts.paired_verdicts, 4) << "an error rate near 0 means the interval is too wide";
}

}  // namespace
}  // namespace gb10tune::bench
