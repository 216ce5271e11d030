#include "gb10tune/bench/statistics.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gb10tune::bench {
namespace {

TEST(Statistics, OddAndEvenMedians) {
  const std::vector<double> odd{5, 1, 3};
  EXPECT_DOUBLE_EQ(summarize(odd).median, 3);
  const std::vector<double> even{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(summarize(even).median, 2.5);
}

TEST(Statistics, SpreadFigures) {
  const std::vector<double> values{2, 4, 4, 4, 5, 5, 7, 9};
  const SampleStats stats = summarize(values);
  EXPECT_EQ(stats.count, 8);
  EXPECT_DOUBLE_EQ(stats.min, 2);
  EXPECT_DOUBLE_EQ(stats.max, 9);
  EXPECT_DOUBLE_EQ(stats.mean, 5);
  EXPECT_NEAR(stats.stddev, 2.138089935, 1e-9);  // sample (n-1) deviation
  EXPECT_NEAR(stats.cv, 2.138089935 / 5, 1e-9);
}

TEST(Statistics, EmptyAndSingle) {
  EXPECT_EQ(summarize({}).count, 0);
  const std::vector<double> one{3};
  const SampleStats stats = summarize(one);
  EXPECT_DOUBLE_EQ(stats.median, 3);
  EXPECT_DOUBLE_EQ(stats.stddev, 0);
  EXPECT_DOUBLE_EQ(stats.cv, 0);
}

std::vector<double> one_to(int n) {
  std::vector<double> values;
  for (int i = n; i >= 1; --i) {  // unsorted on purpose
    values.push_back(i);
  }
  return values;
}

TEST(MedianInterval, TenSamplesUseTheSecondAndNinthOrderStatistics) {
  const MedianInterval interval = median_interval(one_to(10));
  EXPECT_DOUBLE_EQ(interval.low, 2);
  EXPECT_DOUBLE_EQ(interval.high, 9);
  EXPECT_NEAR(interval.confidence, 1 - 2 * 11.0 / 1024, 1e-12);  // P(Bin(10,.5) <= 1) = 11/1024
}

TEST(MedianInterval, TwentySamplesUseTheSixthAndFifteenth) {
  const MedianInterval interval = median_interval(one_to(20));
  EXPECT_DOUBLE_EQ(interval.low, 6);
  EXPECT_DOUBLE_EQ(interval.high, 15);
  EXPECT_NEAR(interval.confidence, 1 - 2 * 21700.0 / 1048576, 1e-12);  // P(B <= 5) = 21700/2^20
}

TEST(MedianInterval, FewSamplesFallBackToTheRangeAndSaySo) {
  const MedianInterval five = median_interval(one_to(5));
  EXPECT_DOUBLE_EQ(five.low, 1);
  EXPECT_DOUBLE_EQ(five.high, 5);
  EXPECT_DOUBLE_EQ(five.confidence, 1 - 2.0 / 32);
  const std::vector<double> single{7};
  EXPECT_DOUBLE_EQ(median_interval(single).low, 7);
  EXPECT_DOUBLE_EQ(median_interval(single).high, 7);
  EXPECT_DOUBLE_EQ(median_interval(single).confidence, 0);
  EXPECT_DOUBLE_EQ(median_interval({}).high, 0);
}

TEST(MedianInterval, LowerConfidenceNarrowsTheInterval) {
  const MedianInterval wide = median_interval(one_to(20), 0.99);
  const MedianInterval narrow = median_interval(one_to(20), 0.5);
  EXPECT_LT(wide.low, narrow.low);
  EXPECT_GT(wide.high, narrow.high);
  EXPECT_GE(wide.confidence, 0.99);
  EXPECT_GE(narrow.confidence, 0.5);
}

TEST(MedianAbsoluteDeviation, IsTheMedianOfTheDeviations) {
  const std::vector<double> values{9, 1, 2, 2, 4, 6, 1};  // median 2; deviations 0 0 1 1 2 4 7
  EXPECT_DOUBLE_EQ(median_absolute_deviation(values), 1);
  const std::vector<double> single{3};
  EXPECT_DOUBLE_EQ(median_absolute_deviation(single), 0);
}

}  // namespace
}  // namespace gb10tune::bench
