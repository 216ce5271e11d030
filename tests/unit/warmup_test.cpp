// The warm-up steadiness rule (kernels/warmup.hpp), without a GPU: run times as an H200 gives
// them (the first runs of a case 8-10% slow, then steady), noisy ones and the bounds.
#include "gb10tune/kernels/warmup.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gb10tune::kernels {
namespace {

// Feeds `times` to the rule one run at a time, as run_case does; returns how many runs it took
// and the state it stopped in (`more` when `times` ran out first).
std::pair<std::size_t, WarmupState> replay(const std::vector<double>& times,
                                           const WarmupRule& rule) {
  std::vector<double> done;
  while (warmup_state(done, rule) == WarmupState::more) {
    if (done.size() == times.size()) {
      return {done.size(), WarmupState::more};
    }
    done.push_back(times[done.size()]);
  }
  return {done.size(), warmup_state(done, rule)};
}

WarmupRule rule_without_time_floor(int min_runs) {
  WarmupRule rule = steady_warmup_rule(min_runs);
  rule.min_seconds = 0;
  return rule;
}

TEST(Warmup, FixedCountRunsExactlyThatMany) {
  const WarmupRule rule = fixed_warmup_rule(3);
  EXPECT_EQ(replay({1.3, 1.2, 1.1, 1.0, 1.0}, rule),
            std::make_pair(std::size_t{3}, WarmupState::settled));
  EXPECT_EQ(warmup_state({}, fixed_warmup_rule(0)), WarmupState::settled);
  EXPECT_EQ(describe_unsettled({1.3, 1.2, 1.1}, rule), "");
}

TEST(Warmup, SlowFirstRunsAreWaitedOut) {
  // 1 GiB write on an H200: the first ~2 ms of runs ~9% slow (and steady among themselves),
  // then steady at full speed.
  const WarmupRule rule = steady_warmup_rule(3);
  std::vector<double> times;
  double total = 0;
  while (total < 10 * rule.min_seconds) {
    times.push_back(total < 2e-3 ? 2.75e-4 : 2.50e-4 * (times.size() % 2 == 0 ? 1.0 : 1.002));
    total += times.back();
  }
  // A fixed count of 3 would have timed slow runs.
  EXPECT_EQ(times[replay(times, fixed_warmup_rule(3)).first], 2.75e-4);
  // The window alone settles inside the slow phase: the time floor is what waits it out.
  EXPECT_EQ(replay(times, rule_without_time_floor(3)).first, 3u);
  const auto [runs, state] = replay(times, rule);
  EXPECT_EQ(state, WarmupState::settled);
  ASSERT_LT(runs, times.size());
  EXPECT_LT(times[runs], 2.6e-4);  // the first timed run is at full speed
  double warmed = 0;
  for (std::size_t i = 1; i < runs; ++i) {
    warmed += times[i];
  }
  EXPECT_GE(warmed, rule.min_seconds);
  EXPECT_LT(warmed, rule.min_seconds + 3e-4);  // and not a run longer than needed
}

TEST(Warmup, AWindowThatSpansTheStepIsNotSteady) {
  const WarmupRule rule = rule_without_time_floor(0);
  EXPECT_EQ(warmup_state({1.10e-3, 1.00e-3, 1.00e-3}, rule), WarmupState::more);
  EXPECT_EQ(warmup_state({1.10e-3, 1.00e-3, 1.00e-3, 1.00e-3}, rule), WarmupState::settled);
  // Within the tolerance counts; just above it does not.
  EXPECT_EQ(warmup_state({1.00e-3, 1.0099e-3, 1.00e-3}, rule), WarmupState::settled);
  EXPECT_EQ(warmup_state({1.00e-3, 1.0102e-3, 1.00e-3}, rule), WarmupState::more);
}

TEST(Warmup, NeverFewerThanTheMinimumNorTheWindow) {
  const std::vector<double> steady(6, 1e-3);
  EXPECT_EQ(replay(steady, rule_without_time_floor(5)).first, 5u);
  EXPECT_EQ(replay(steady, rule_without_time_floor(1)).first, 3u);
  // The minimum holds even past the time bound.
  EXPECT_EQ(replay({1.0, 2.0, 1.0, 2.0, 1.0}, steady_warmup_rule(4)),
            std::make_pair(std::size_t{4}, WarmupState::limit));
}

TEST(Warmup, ShortRunsWarmUpForAMinimumTime) {
  WarmupRule rule = steady_warmup_rule(3);
  rule.min_seconds = 0.01;
  // 1 ms runs, steady from the start: ten after the first make 10 ms.
  const std::vector<double> times(50, 1e-3);
  EXPECT_EQ(replay(times, rule), std::make_pair(std::size_t{11}, WarmupState::settled));
  // Long runs are past the floor after the window.
  EXPECT_EQ(replay({0.02, 0.02, 0.02, 0.02}, rule).first, 3u);
}

TEST(Warmup, NoisyRunsStopAtTheRunOrTimeBound) {
  std::vector<double> noisy;
  for (int i = 0; i < 500; ++i) {
    noisy.push_back(i % 2 == 0 ? 1.0e-4 : 1.05e-4);
  }
  const WarmupRule rule = steady_warmup_rule(3);
  EXPECT_EQ(replay(noisy, rule),
            std::make_pair(static_cast<std::size_t>(rule.max_runs), WarmupState::limit));
  // 50 ms runs: the time bound (0.2 s) comes first.
  std::vector<double> long_noisy;
  for (int i = 0; i < 20; ++i) {
    long_noisy.push_back(i % 2 == 0 ? 0.050 : 0.055);
  }
  const auto [runs, state] = replay(long_noisy, rule);
  EXPECT_EQ(state, WarmupState::limit);
  EXPECT_EQ(runs, 5u);  // after the first: 55 + 50 + 55 + 50 ms >= 200 ms
}

TEST(Warmup, AOneOffFirstRunNeitherWarmsUpNorEndsTheWarmup) {
  // 1 GiB of managed memory on an H200: the first copy migrates it (~0.23 s), then 0.5 ms runs.
  std::vector<double> times = {0.23};
  for (int i = 0; i < 60; ++i) {
    times.push_back(i % 2 == 0 ? 5.00e-4 : 5.01e-4);
  }
  const WarmupRule rule = steady_warmup_rule(3);
  const auto [runs, state] = replay(times, rule);
  EXPECT_EQ(state, WarmupState::settled);
  EXPECT_EQ(runs, 21u);  // 20 runs of ~0.5 ms after the first make the 10 ms
}

TEST(Warmup, SpreadNeedsAWindowOfPositiveTimes) {
  EXPECT_FALSE(last_spread({1.0, 1.0}, 3));
  EXPECT_FALSE(last_spread({1.0, 0.0, 1.0}, 3));
  EXPECT_FALSE(last_spread({1.0, 1.0, 1.0}, 0));
  EXPECT_NEAR(*last_spread({9.0, 1.0, 1.02, 1.01}, 3), 0.02, 1e-12);
}

TEST(Warmup, UnsettledWarmupIsDescribed) {
  const WarmupRule rule = steady_warmup_rule(3);
  std::vector<double> noisy;
  for (int i = 0; i < rule.max_runs; ++i) {
    noisy.push_back(i % 2 == 0 ? 1.0e-4 : 1.03e-4);
  }
  EXPECT_EQ(describe_unsettled(noisy, rule),
            "the last 3 of 100 untimed runs still vary by 3.0% (settled means within 1%)");
  const std::vector<double> tiny(static_cast<std::size_t>(rule.max_runs), 1e-6);
  EXPECT_EQ(describe_unsettled(tiny, rule),
            "100 untimed runs agree but took 0.1 ms after the first, less than the 10 ms asked");
  EXPECT_EQ(describe_unsettled({1e-3, 1e-3, 1e-3}, rule), "");  // still running: not a limit
}

}  // namespace
}  // namespace gb10tune::kernels
