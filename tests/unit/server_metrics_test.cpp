#include "gb10tune/bench/server_metrics.hpp"

#include <gtest/gtest.h>

namespace gb10tune::bench {
namespace {

ServerTimings timings(double prompt_n, double prompt_ms, double predicted_n, double predicted_ms) {
  ServerTimings t;
  t.prompt_n = prompt_n;
  t.prompt_ms = prompt_ms;
  t.prompt_per_second = prompt_n / prompt_ms * 1000;
  t.predicted_n = predicted_n;
  t.predicted_ms = predicted_ms;
  t.predicted_per_second = predicted_n / predicted_ms * 1000;
  return t;
}

TEST(ServerMetrics, FiguresAreTheServersOwn) {
  ServerTimings t = timings(1200, 3883.5, 256, 10800);
  t.prompt_per_second = 309.01;  // whatever the server said, not recomputed
  t.predicted_per_second = 23.7;
  EXPECT_DOUBLE_EQ(*metric_value(Metric::prefill_tps, t), 309.01);
  EXPECT_DOUBLE_EQ(*metric_value(Metric::decode_tps, t), 23.7);
  EXPECT_DOUBLE_EQ(*metric_value(Metric::ttft_ms, t), 3883.5);
  EXPECT_FALSE(metric_value(Metric::acceptance_rate, t));
  EXPECT_FALSE(metric_value(Metric::mean_accepted_length, t));
}

TEST(ServerMetrics, DraftCountsGiveAcceptanceAndMeanLength) {
  ServerTimings t = timings(100, 400, 370, 15600);
  t.draft_n = 400;
  t.draft_n_accepted = 270;
  EXPECT_DOUBLE_EQ(*metric_value(Metric::acceptance_rate, t), 270.0 / 400);
  // 370 tokens from 370 - 270 = 100 target steps: 3.7 tokens per step (K4's mean_len).
  EXPECT_DOUBLE_EQ(*metric_value(Metric::mean_accepted_length, t), 3.7);
  EXPECT_DOUBLE_EQ(*mean_accepted_length(t), 3.7);
}

TEST(ServerMetrics, DegenerateDraftAndCachedPromptsHaveNoFigure) {
  ServerTimings t = timings(0, 0.1, 10, 500);
  t.prompt_per_second = 0;
  EXPECT_FALSE(metric_value(Metric::prefill_tps, t));  // everything came from the cache
  EXPECT_DOUBLE_EQ(*metric_value(Metric::ttft_ms, t), 0.1);
  t.draft_n = 0;
  t.draft_n_accepted = 0;
  EXPECT_FALSE(metric_value(Metric::acceptance_rate, t));
  t.draft_n = 12;
  t.draft_n_accepted = 10;  // would leave 0 steps: not a valid report
  EXPECT_FALSE(metric_value(Metric::mean_accepted_length, t));
}

TEST(ServerMetrics, InfoAndParseRoundTrip) {
  for (Metric metric : kMetrics) {
    EXPECT_EQ(parse_metric(metric_info(metric).id), metric);
  }
  EXPECT_FALSE(parse_metric("speed"));
  EXPECT_FALSE(metric_info(Metric::ttft_ms).higher_is_better);
  EXPECT_TRUE(metric_info(Metric::decode_tps).higher_is_better);
}

TEST(ServerMetrics, SummaryOfSamplesLeavesOutRequestsWithoutTheMetric) {
  std::vector<RequestSample> samples(4);
  const double decode[] = {21.0, 19.5, 23.0, 20.0};
  for (std::size_t i = 0; i < samples.size(); ++i) {
    samples[i].timings = timings(100, 300, 100, 5000);
    samples[i].timings.predicted_per_second = decode[i];
  }
  samples[1].timings.draft_n = 30;
  samples[1].timings.draft_n_accepted = 15;
  const MetricSummary d = summarize_samples(Metric::decode_tps, samples);
  EXPECT_EQ(d.stats.count, 4);
  EXPECT_DOUBLE_EQ(d.stats.median, 20.5);
  EXPECT_DOUBLE_EQ(d.stats.min, 19.5);
  EXPECT_DOUBLE_EQ(d.stats.max, 23.0);
  EXPECT_DOUBLE_EQ(d.interval.low, 19.5);  // four samples: the range, 87.5%
  EXPECT_DOUBLE_EQ(d.interval.high, 23.0);
  EXPECT_DOUBLE_EQ(d.mad, 0.75);  // deviations 0.5 1 2.5 0.5 → median 0.75
  EXPECT_EQ((std::vector<double>{21.0, 19.5, 23.0, 20.0}), d.values);
  const MetricSummary a = summarize_samples(Metric::acceptance_rate, samples);
  EXPECT_EQ(a.stats.count, 1);
  EXPECT_DOUBLE_EQ(a.stats.median, 0.5);
}

}  // namespace
}  // namespace gb10tune::bench
