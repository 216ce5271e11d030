#include "gb10tune/tune/tune_budget.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gb10tune::tune {
namespace {

TEST(TuneBudget, NothingIsKnownBeforeTheFirstCandidate) {
  const TuneBudget budget(600);
  EXPECT_EQ(budget.budget_s(), 600);
  EXPECT_FALSE(budget.restart_s());
  EXPECT_FALSE(budget.sample_s());
  EXPECT_FALSE(budget.candidate_s(8, true));
  EXPECT_FALSE(budget.candidates_left(0, 8, true));
  EXPECT_TRUE(budget.may_start(599, 8, true));  // the first candidate says what one costs
  EXPECT_THROW(TuneBudget(0), std::invalid_argument);
}

TEST(TuneBudget, MeanCostsOfRestartsAndSamples) {
  TuneBudget budget(600);
  budget.add({.restart_s = 20, .warmup_s = 5, .samples_s = 40, .samples = 8});
  EXPECT_EQ(budget.restart_s(), 25);  // restart + warm-up
  EXPECT_EQ(budget.sample_s(), 5);
  EXPECT_EQ(budget.candidate_s(8, true), 65);
  EXPECT_EQ(budget.candidate_s(8, false), 40);
  // A per-request candidate: no restart; its samples count.
  budget.add({.restart_s = 0, .warmup_s = 0, .samples_s = 36, .samples = 8});
  EXPECT_EQ(budget.restart_s(), 25);
  EXPECT_EQ(budget.sample_s(), 76.0 / 16);
  // One more restart candidate: 8 × 4.75 + 25 = 63 s. After 100 s, 500 s are left, 63 of them
  // kept for the final re-measure: 437 / 63 = 6.9 → 6 more.
  EXPECT_EQ(budget.candidate_s(8, true), 63);
  EXPECT_EQ(budget.candidates_left(100, 8, true), 6);
  EXPECT_EQ(budget.candidates_left(100, 8, false), (600 - 100 - 38) / 38);  // 12
  // May start while it and the re-measure end within the budget: 474 + 2 × 63 = 600.
  EXPECT_TRUE(budget.may_start(474, 8, true));
  EXPECT_FALSE(budget.may_start(475, 8, true));
  EXPECT_EQ(budget.candidates_left(475, 8, true), 0);
  EXPECT_EQ(budget.candidates_left(700, 8, true), 0);  // over already
}

TEST(TuneBudget, ARestartIsUnknownUntilOneWasMeasured) {
  TuneBudget budget(300);
  budget.add({.restart_s = 0, .warmup_s = 0, .samples_s = 30, .samples = 6});
  EXPECT_EQ(budget.candidate_s(6, false), 30);
  EXPECT_FALSE(budget.candidate_s(6, true));
  EXPECT_TRUE(budget.may_start(290, 6, true));
  EXPECT_FALSE(budget.may_start(250, 6, false));  // 250 + 60 > 300
}

TEST(ParseDuration, UnitsAndBareSeconds) {
  EXPECT_EQ(parse_duration_s("20m"), 1200);
  EXPECT_EQ(parse_duration_s("1h30m"), 5400);
  EXPECT_EQ(parse_duration_s("90s"), 90);
  EXPECT_EQ(parse_duration_s("45"), 45);
  EXPECT_EQ(parse_duration_s("1h"), 3600);
  EXPECT_EQ(parse_duration_s("2m30s"), 150);
  EXPECT_EQ(parse_duration_s("1h0m5s"), 3605);
  EXPECT_EQ(parse_duration_s("1.5h"), 5400);
  EXPECT_EQ(parse_duration_s(" 3m "), 180);
}

TEST(ParseDuration, RefusesWhatIsNoPositiveDuration) {
  for (const char* bad : {"", " ", "0", "0s", "0h0m", "-5m", "5x", "m", "5 m", "30m1h", "1h1h",
                          "5m5", "1..5m", "1.m", ".5m", "1h-5m", "abc"}) {
    EXPECT_FALSE(parse_duration_s(bad)) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace gb10tune::tune
