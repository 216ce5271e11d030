#include "gb10tune/tune/tune_budget.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gb10tune::tune {
namespace {

TEST(TuneBudget, NothingIsKnownBeforeTheFirstRun) {
  const TuneBudget budget(600);
  EXPECT_EQ(budget.budget_s(), 600);
  EXPECT_FALSE(budget.restart_s());
  EXPECT_FALSE(budget.sample_s());
  EXPECT_FALSE(budget.round_s(8, true));
  EXPECT_FALSE(budget.final_s(8, false));
  EXPECT_TRUE(budget.fits(599, std::nullopt, 0));  // the first run says what one costs
  EXPECT_THROW(TuneBudget(0), std::invalid_argument);
}

TEST(TuneBudget, ARoundIsTwoRunsAndTwoRestarts) {
  TuneBudget budget(600);
  budget.add_run(45, 8);  // the start: 8 requests and the warm-up in 45 s
  EXPECT_EQ(budget.sample_s(), 45.0 / 8);
  // No restart measured yet: it counts 0.
  EXPECT_EQ(budget.round_s(8, true), 90);
  EXPECT_EQ(budget.final_s(8, false), 45);
  budget.add_restart(20);
  budget.add_restart(10);
  EXPECT_EQ(budget.restart_s(), 15);
  budget.add_run(35, 8);
  EXPECT_EQ(budget.sample_s(), 5);
  EXPECT_EQ(budget.round_s(8, true), 2 * (40 + 15));
  EXPECT_EQ(budget.round_s(8, false), 80);
  // A winner whose last run chose it is measured again after a restart.
  EXPECT_EQ(budget.final_s(8, true), 2 * 40 + 15);
  // Fits while the round and the final comparison end within the budget: 450 + 110 + 40 = 600.
  EXPECT_TRUE(budget.fits(450, budget.round_s(8, true), *budget.final_s(8, false)));
  EXPECT_FALSE(budget.fits(451, budget.round_s(8, true), *budget.final_s(8, false)));
  budget.add_run(10, 0);  // a run that measured nothing changes nothing
  EXPECT_EQ(budget.sample_s(), 5);
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
