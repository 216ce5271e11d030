#include "gb10tune/bench/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "gb10tune/bench/paired.hpp"
#include "support/server_results.hpp"

namespace gb10tune::bench {
namespace {

using testing::add_level;
using testing::make_result;
using testing::with_other_requests;

const std::vector<double> kDecodeA{20.1, 20.5, 20.3, 20.8, 20.4, 20.6, 20.2, 20.7, 20.5, 20.4};
const std::vector<double> kDecodeB{23.5, 23.9, 23.6, 23.8, 23.7, 24.0, 23.4, 23.7, 23.9, 23.6};
const std::vector<double> kPrefill{309, 310, 308, 311, 309.5};

const MetricComparison& row(const Comparison& c, const std::string& label) {
  for (const MetricComparison& r : c.rows) {
    if (r.label == label) {
      return r;
    }
  }
  throw std::runtime_error("no row " + label);
}

TEST(Compare, ARunComparedWithItselfHasNoSignificantDifference) {
  ServerBenchResult a = make_result(kDecodeA, kPrefill, {180, 200, 190});
  add_level(a, 2, {11, 11.2, 10.9, 11.1, 11.0, 11.3});
  const Comparison c = compare_results(a, a, "base", "base");
  EXPECT_FALSE(c.any_significant);
  EXPECT_TRUE(c.settings.empty());
  EXPECT_TRUE(c.warning.empty());
  ASSERT_EQ(c.rows.size(), 7u);  // 5 metrics + per-session and total at concurrency 2
  for (const MetricComparison& r : c.rows) {
    EXPECT_EQ(r.verdict, Verdict::no_significant_difference) << r.label;
    EXPECT_DOUBLE_EQ(r.change_percent, 0) << r.label;
  }
}

TEST(Compare, ClearImprovementIsBetterWithItsChange) {
  const ServerBenchResult a = make_result(kDecodeA, kPrefill, {180, 200, 190}, 3);
  const ServerBenchResult b = make_result(kDecodeB, kPrefill, {220, 230, 225}, 4);
  const Comparison c = compare_results(a, b, "n3", "n4");
  EXPECT_TRUE(c.any_significant);
  const MetricComparison& decode = row(c, "decode");
  EXPECT_EQ(decode.verdict, Verdict::better);
  EXPECT_DOUBLE_EQ(decode.a.stats.median, 20.45);
  EXPECT_DOUBLE_EQ(decode.b.stats.median, 23.7);
  EXPECT_NEAR(decode.change_percent, (23.7 - 20.45) / 20.45 * 100, 1e-9);
  EXPECT_EQ(row(c, "draft acceptance").verdict, Verdict::better);
  EXPECT_EQ(row(c, "prefill").verdict, Verdict::no_significant_difference);
  // One setting changed: no warning, and it is named.
  ASSERT_EQ(c.settings.size(), 1u);
  EXPECT_EQ(c.settings[0].key, "argv:--spec-draft-n-max");
  EXPECT_TRUE(c.warning.empty());
}

TEST(Compare, LowerIsBetterForTimeToFirstToken) {
  const ServerBenchResult slow = make_result(kDecodeA, {150, 151, 152, 149, 150});
  const ServerBenchResult fast = make_result(kDecodeA, kPrefill);
  const Comparison c = compare_results(slow, fast, "slow", "fast");
  EXPECT_EQ(row(c, "time to first token").verdict, Verdict::better);  // ms went down
  EXPECT_EQ(row(c, "prefill").verdict, Verdict::better);
  EXPECT_LT(row(c, "time to first token").change_percent, 0);
  const Comparison back = compare_results(fast, slow, "fast", "slow");
  EXPECT_EQ(row(back, "time to first token").verdict, Verdict::worse);
  EXPECT_EQ(row(back, "prefill").verdict, Verdict::worse);
  EXPECT_EQ(row(back, "decode").verdict, Verdict::no_significant_difference);
}

TEST(Compare, OverlappingNoiseIsNotSignificantEvenWhenMediansDiffer) {
  const ServerBenchResult a = make_result({18, 22, 19, 21, 20, 23, 17, 20.5, 19.5, 21.5}, kPrefill);
  const ServerBenchResult b =
      with_other_requests(make_result({19, 23, 20, 22, 21, 24, 18, 21.5, 20.5, 22.5}, kPrefill));
  const Comparison c = compare_results(a, b, "a", "b");
  const MetricComparison& decode = row(c, "decode");
  EXPECT_GT(decode.change_percent, 4);
  EXPECT_EQ(decode.verdict, Verdict::no_significant_difference);
  EXPECT_FALSE(decode.paired);
  EXPECT_EQ(c.paired_requests, 0);
  EXPECT_FALSE(c.any_significant);
}

TEST(Compare, TheSameRequestsInTheSameOrderArePaired) {
  // The same requests, each 20% faster in b: the per-request ratios show it although the
  // medians' intervals overlap.
  const std::vector<double> decode_a{18, 22, 19, 21, 20, 23, 17, 20.5, 19.5, 21.5};
  std::vector<double> decode_b;
  for (const double v : decode_a) {
    decode_b.push_back(v * 1.2);
  }
  const ServerBenchResult a = make_result(decode_a, kPrefill);
  const ServerBenchResult b = make_result(decode_b, kPrefill);
  const Comparison c = compare_results(a, b, "a", "b");
  EXPECT_EQ(c.paired_requests, 10);
  const MetricComparison& decode = row(c, "decode");
  ASSERT_TRUE(decode.paired);
  EXPECT_EQ(decode.paired->pairs, 10);
  EXPECT_NEAR(decode.paired->ratio, 1.2, 1e-9);
  // Two runs measured once each: the interval counts a run-to-run noise of 3% per run
  // (t_9 · sqrt(2 · 0.03²) = ±9.6% in the log), not the pairs' spread alone (0 here).
  EXPECT_NEAR(std::log(decode.paired->ratio_high / decode.paired->ratio),
              student_t_quantile(0.95, 9) * std::sqrt(2 * 0.03 * 0.03), 1e-9);
  EXPECT_EQ(decode.verdict, Verdict::better);
  EXPECT_TRUE(c.any_significant);
  // Prefill did not change: ratio 1.
  ASSERT_TRUE(row(c, "prefill").paired);
  EXPECT_EQ(row(c, "prefill").paired->ratio, 1);
  EXPECT_EQ(row(c, "prefill").verdict, Verdict::no_significant_difference);
}

TEST(Compare, AFivePercentChangeBetweenTwoSingleRunsIsWithinTheRunToRunNoise) {
  // Each request 1 t/s faster (about 5%): identical runs of one H200 server moved up to 8%, so
  // two single runs cannot tell this from the noise.
  const ServerBenchResult a = make_result({18, 22, 19, 21, 20, 23, 17, 20.5, 19.5, 21.5}, kPrefill);
  const ServerBenchResult b = make_result({19, 23, 20, 22, 21, 24, 18, 21.5, 20.5, 22.5}, kPrefill);
  const Comparison c = compare_results(a, b, "a", "b");
  const MetricComparison& decode = row(c, "decode");
  ASSERT_TRUE(decode.paired);
  EXPECT_GT(decode.paired->ratio, 1.04);
  EXPECT_LT(decode.paired->ratio_low, 1);
  EXPECT_EQ(decode.verdict, Verdict::no_significant_difference);
}

TEST(Compare, ALevelThatWandersWithinTheRunsWidensTheInterval) {
  // b is 10% faster in its first half and 10% slower in its second: the pairs' mean says 1.0,
  // the wander says a run's level moves by about 10%, and the interval is wider than the floor.
  std::vector<double> decode_a;
  std::vector<double> decode_b;
  for (int i = 0; i < 16; ++i) {
    decode_a.push_back(20 + i % 3);
    decode_b.push_back((20 + i % 3) * (i < 8 ? 1.1 : 1 / 1.1));
  }
  const Comparison c =
      compare_results(make_result(decode_a, kPrefill), make_result(decode_b, kPrefill), "a", "b");
  const MetricComparison& decode = row(c, "decode");
  ASSERT_TRUE(decode.paired);
  EXPECT_GT(decode.paired->level_sd, std::sqrt(2 * 0.03 * 0.03));
  EXPECT_EQ(decode.verdict, Verdict::no_significant_difference);
}

TEST(Compare, RequestsPairOnlySampleBySample) {
  const ServerBenchResult a = make_result(kDecodeA, kPrefill);
  // One sample fewer, another session, or another order: not paired.
  const ServerBenchResult shorter =
      make_result(std::vector<double>(kDecodeB.begin(), kDecodeB.end() - 1), kPrefill);
  ServerBenchResult session = make_result(kDecodeB, kPrefill);
  session.levels[0].samples[3].session = 1;
  ServerBenchResult swapped = make_result(kDecodeB, kPrefill);
  std::swap(swapped.levels[0].samples[0].request, swapped.levels[0].samples[1].request);
  for (const ServerBenchResult* b :
       std::initializer_list<const ServerBenchResult*>{&shorter, &session, &swapped}) {
    const Comparison c = compare_results(a, *b, "a", "b");
    EXPECT_EQ(c.paired_requests, 0);
    EXPECT_FALSE(row(c, "decode").paired);
  }
  // A headline that does not pair, a level that does: only that level's rows are paired.
  ServerBenchResult x = make_result(kDecodeA, kPrefill);
  ServerBenchResult y = with_other_requests(make_result(kDecodeA, kPrefill));
  add_level(x, 2, {11.0, 11.1, 10.9, 11.0, 11.2, 10.8});
  add_level(y, 2, {13.2, 13.3, 13.1, 13.2, 13.4, 13.0});  // 20% faster: beyond a run's noise
  const Comparison c = compare_results(x, y, "x", "y");
  EXPECT_EQ(c.paired_requests, 0);
  EXPECT_FALSE(row(c, "decode").paired);
  ASSERT_TRUE(row(c, "per-session decode @2").paired);
  EXPECT_EQ(row(c, "per-session decode @2").paired->pairs, 6);
  ASSERT_TRUE(row(c, "total decode @2").paired);
  EXPECT_EQ(row(c, "total decode @2").paired->pairs, 3);  // rounds
  EXPECT_EQ(row(c, "per-session decode @2").verdict, Verdict::better);
}

TEST(Compare, MoreThanOneSettingChangedWarns) {
  ServerBenchResult a = make_result(kDecodeA, kPrefill, {}, 3);
  ServerBenchResult b = make_result(kDecodeB, kPrefill, {}, 4);
  b.provenance.settings["argv:-np"] = "3";
  b.provenance.settings["build"] = "b7100-aaaaaaa";
  const Comparison c = compare_results(a, b, "a", "b");
  EXPECT_EQ(c.settings.size(), 3u);
  EXPECT_NE(c.warning.find("differ in 3 settings"), std::string::npos) << c.warning;
  EXPECT_NE(c.warning.find("argv:-np"), std::string::npos);
  EXPECT_NE(c.warning.find("K7"), std::string::npos);
}

TEST(Compare, MetricsOneRunLacksAreNotComparable) {
  const ServerBenchResult plain = make_result(kDecodeA, kPrefill);
  const ServerBenchResult spec = make_result(kDecodeB, kPrefill, {200});
  const Comparison c = compare_results(plain, spec, "plain", "mtp");
  EXPECT_EQ(row(c, "draft acceptance").verdict, Verdict::not_comparable);
  EXPECT_EQ(row(c, "mean accepted length").verdict, Verdict::not_comparable);
  // Neither run drafted: the rows are left out.
  EXPECT_EQ(compare_results(plain, plain, "a", "b").rows.size(), 3u);
}

TEST(Compare, ConcurrencyLevelsAreComparedWhenBothRanThem) {
  ServerBenchResult a = make_result(kDecodeA, kPrefill);
  ServerBenchResult b = make_result(kDecodeA, kPrefill);
  add_level(a, 2, {11.0, 11.1, 10.9, 11.0, 11.2, 10.8, 11.0, 11.1, 11.0, 10.9});
  add_level(b, 2, {8.0, 8.1, 7.9, 8.0, 8.2, 7.8, 8.0, 8.1, 8.0, 7.9});
  add_level(a, 3, {7, 7, 7});
  add_level(b, 4, {5, 5, 5, 5});
  const Comparison c = compare_results(a, b, "a", "b");
  EXPECT_EQ(row(c, "per-session decode @2").verdict, Verdict::worse);
  const MetricComparison& total = row(c, "total decode @2");
  EXPECT_DOUBLE_EQ(total.a.stats.median,
                   22.0);  // rounds of two sessions: 22.1 21.9 22 22 21.9 → 22
  EXPECT_EQ(total.verdict, Verdict::worse);
  EXPECT_EQ(c.skipped_levels, (std::vector<int>{3, 4}));
}

TEST(Compare, JudgeIsTheIntervalOverlapRule) {
  MetricSummary a = summarize_metric(Metric::decode_tps, {10, 11, 12, 13, 14});
  MetricSummary touching = summarize_metric(Metric::decode_tps, {14, 15, 16, 17, 18});
  MetricSummary apart = summarize_metric(Metric::decode_tps, {14.1, 15, 16, 17, 18});
  EXPECT_EQ(judge(a, touching, true), Verdict::no_significant_difference);
  EXPECT_EQ(judge(a, apart, true), Verdict::better);
  EXPECT_EQ(judge(a, apart, false), Verdict::worse);
  EXPECT_EQ(judge(apart, a, true), Verdict::worse);
  EXPECT_EQ(judge(a, summarize_metric(Metric::decode_tps, {}), true), Verdict::not_comparable);
}

TEST(Compare, FewSamplesAreNeverBetterOrWorse) {
  // Three samples each, fully apart: [min, max] covers the median only 75% of the time, and
  // two runs of one server separate like this by chance one time in ten.
  const ServerBenchResult a = make_result({20.1, 20.5, 20.3}, kPrefill);
  const ServerBenchResult b = with_other_requests(make_result({23.5, 23.9, 23.6}, kPrefill));
  const Comparison c = compare_results(a, b, "a", "b");
  const MetricComparison& decode = row(c, "decode");
  EXPECT_EQ(decode.verdict, Verdict::too_few_samples);
  EXPECT_DOUBLE_EQ(decode.a.interval.confidence, 0.75);
  EXPECT_FALSE(c.any_significant);
  EXPECT_EQ(to_string(Verdict::too_few_samples), "too few samples");
  // From kMinSamplesForVerdict samples on the same separation is a verdict.
  const ServerBenchResult a5 = make_result({20.1, 20.5, 20.3, 20.2, 20.4}, kPrefill);
  const ServerBenchResult b5 =
      with_other_requests(make_result({23.5, 23.9, 23.6, 23.7, 23.8}, kPrefill));
  EXPECT_EQ(row(compare_results(a5, b5, "a", "b"), "decode").verdict, Verdict::better);
  // Paired, three pairs are enough (kMinPairsForVerdict) for a change beyond the run-to-run
  // noise (t_2 · sqrt(2 · 0.03²) = ±18% in the log: 1.5× here); two are not.
  EXPECT_EQ(row(compare_results(a, make_result({30.0, 30.6, 30.2}, kPrefill), "a", "b"), "decode")
                .verdict,
            Verdict::better);
  EXPECT_EQ(row(compare_results(make_result({20.1, 20.5}, kPrefill),
                                make_result({23.5, 23.9}, kPrefill), "a", "b"),
                "decode")
                .verdict,
            Verdict::too_few_samples);
}

}  // namespace
}  // namespace gb10tune::bench
