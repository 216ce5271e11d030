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

}  // namespace
}  // namespace gb10tune::bench
