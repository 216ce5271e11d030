#include "gb10tune/tune/coordinate_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

namespace gb10tune::tune {
namespace {

using nlohmann::json;

KnobPlan search_knob(std::string_view setting, std::vector<json> values, bool ordered = true) {
  KnobPlan plan;
  plan.knob = find_knob(setting);
  plan.values = std::move(values);
  plan.ordered = ordered;
  return plan;
}

KnobPlan depth_knob() {
  return search_knob("draft_n_max", {4, 5, 6, 7, 8, 3, 2, 1});  // plan_knobs' order from 4
}

// A response surface: the figure of a configuration (higher is better).
using Surface = std::function<double(const json& settings)>;

// One step of a walk as the test saw it.
struct SearchStep {
  std::string setting;
  json value;
  Outcome outcome;
};

// Runs `search` to its end against `surface`: a candidate is better when its figure is above
// the incumbent's; `refuse` gives the outcome for candidates that are not measured (nullopt:
// measured). Also checks remaining_at_most() against what really came.
std::vector<SearchStep> walk_surface(
    CoordinateSearch& search, const Surface& surface,
    const std::function<std::optional<Outcome>(const Candidate&)>& refuse = {}) {
  std::vector<SearchStep> steps;
  std::vector<int> bounds;
  for (;;) {
    bounds.push_back(search.remaining_at_most());
    const std::optional<Candidate> candidate = search.next();
    if (!candidate) {
      break;
    }
    std::optional<Outcome> outcome = refuse ? refuse(*candidate) : std::nullopt;
    if (!outcome) {
      outcome = surface(candidate->settings) > surface(candidate->incumbent) ? Outcome::better
                                                                             : Outcome::not_better;
    }
    search.record(*candidate, *outcome);
    steps.push_back({candidate->setting, candidate->value, *outcome});
  }
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    EXPECT_GE(bounds[i], static_cast<int>(steps.size() - i)) << "before candidate " << i + 1;
  }
  EXPECT_EQ(bounds.back(), 0);
  EXPECT_EQ(search.proposed(), static_cast<int>(steps.size()));
  return steps;
}

Surface peak_at(const std::string& key, double peak) {
  return [key, peak](const json& s) { return -std::abs(s[key].get<double>() - peak); };
}

std::vector<json> walked_values(const std::vector<SearchStep>& steps) {
  std::vector<json> out;
  for (const SearchStep& step : steps) {
    out.push_back(step.value);
  }
  return out;
}

TEST(CoordinateSearch, WalksOutwardWhileItHelpsThenTheOtherWay) {
  // Decode peaks at n_max 5: from 4 the walk goes 5 (better), 6 (not), then 3 (not), and stops.
  CoordinateSearch search({depth_knob()}, {{"draft_n_max", 4}});
  const auto steps = walk_surface(search, peak_at("draft_n_max", 5));
  EXPECT_EQ(walked_values(steps), (std::vector<json>{5, 6, 3}));
  EXPECT_EQ(steps[0].outcome, Outcome::better);
  EXPECT_EQ(steps[1].outcome, Outcome::not_better);
  EXPECT_EQ(search.incumbent(), (json{{"draft_n_max", 5}}));
  EXPECT_FALSE(search.next());
}

TEST(CoordinateSearch, APeakBelowIsFoundGoingDown) {
  CoordinateSearch search({depth_knob()}, {{"draft_n_max", 4}});
  const auto steps = walk_surface(search, peak_at("draft_n_max", 2));
  EXPECT_EQ(walked_values(steps), (std::vector<json>{5, 3, 2, 1}));
  EXPECT_EQ(search.incumbent()["draft_n_max"], 2);
}

TEST(CoordinateSearch, ARefusedOrFailedCandidateEndsItsDirection) {
  const Surface rising = [](const json& s) { return s["draft_n_max"].get<double>(); };
  for (const Outcome refused : {Outcome::does_not_fit, Outcome::failed}) {
    CoordinateSearch search({depth_knob()}, {{"draft_n_max", 4}});
    const auto steps =
        walk_surface(search, rising, [refused](const Candidate& c) -> std::optional<Outcome> {
          return c.value == 6 ? std::optional(refused) : std::nullopt;
        });
    // 5 better, 6 refused: 7 and 8 are never tried (7 would need more memory still); then 3.
    EXPECT_EQ(walked_values(steps), (std::vector<json>{5, 6, 3}));
    EXPECT_EQ(steps[1].outcome, refused);
    EXPECT_EQ(search.incumbent()["draft_n_max"], 5);
  }
}

TEST(CoordinateSearch, AChoiceTriesEachOtherValue) {
  const KnobPlan fa = search_knob("flash_attn", {json("auto"), json("on"), json("off")}, false);
  const std::map<std::string, double> figure{{"auto", 1}, {"on", 0.5}, {"off", 2}};
  const Surface surface = [&](const json& s) {
    return figure.at(s["flash_attn"].get<std::string>());
  };
  CoordinateSearch search({fa}, {{"flash_attn", "auto"}});
  const auto steps = walk_surface(search, surface);
  // "on" is worse, yet "off" is still tried, and wins.
  EXPECT_EQ(walked_values(steps), (std::vector<json>{json("on"), json("off")}));
  EXPECT_EQ(search.incumbent()["flash_attn"], "off");
  // A better value does not end the choice either: each other value is compared with it.
  const std::map<std::string, double> second{{"auto", 1}, {"on", 3}, {"off", 2}};
  CoordinateSearch again({fa}, {{"flash_attn", "auto"}});
  const auto more = walk_surface(
      again, [&](const json& s) { return second.at(s["flash_attn"].get<std::string>()); });
  EXPECT_EQ(walked_values(more), (std::vector<json>{json("on"), json("off")}));
  EXPECT_EQ(again.incumbent()["flash_attn"], "on");
}

TEST(CoordinateSearch, KnobsOneAfterAnotherFromTheIncumbent) {
  const Surface surface = [](const json& s) {
    return -std::abs(s["draft_n_max"].get<double>() - 5) -
           std::abs(s["ubatch"].get<double>() - 256) / 1000;
  };
  KnobPlan skipped = search_knob("slots", {});
  skipped.skipped = "only for --goal throughput";
  const KnobPlan single = search_knob("threads", {8});  // nothing to change
  CoordinateSearch search(
      {depth_knob(), skipped, single, search_knob("ubatch", {512, 1024, 2048, 256, 128})},
      {{"draft_n_max", 4}, {"ubatch", 512}, {"model", "m.gguf"}});
  std::vector<Candidate> seen;
  for (auto candidate = search.next(); candidate; candidate = search.next()) {
    seen.push_back(*candidate);
    search.record(*candidate, surface(candidate->settings) > surface(candidate->incumbent)
                                  ? Outcome::better
                                  : Outcome::not_better);
  }
  // draft_n_max 5, 6, 3; then ubatch from the new incumbent: 1024, 256 (better), 128.
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[3].setting, "ubatch");
  EXPECT_EQ(seen[3].value, 1024);
  EXPECT_EQ(seen[3].incumbent, (json{{"draft_n_max", 5}, {"ubatch", 512}, {"model", "m.gguf"}}));
  EXPECT_EQ(seen[3].settings, (json{{"draft_n_max", 5}, {"ubatch", 1024}, {"model", "m.gguf"}}));
  EXPECT_EQ(seen[4].value, 256);
  EXPECT_EQ(seen[5].value, 128);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].index, static_cast<int>(i) + 1);
    EXPECT_NE(seen[i].setting, "slots");
    EXPECT_NE(seen[i].setting, "threads");
  }
  EXPECT_EQ(search.incumbent(), (json{{"draft_n_max", 5}, {"ubatch", 256}, {"model", "m.gguf"}}));
}

TEST(CoordinateSearch, NextWithoutRecordProposesTheSameCandidate) {
  CoordinateSearch search({depth_knob()}, {{"draft_n_max", 4}});
  const auto first = search.next();
  const int remaining = search.remaining_at_most();
  const auto again = search.next();
  ASSERT_TRUE(first && again);
  EXPECT_EQ(again->index, first->index);
  EXPECT_EQ(again->value, first->value);
  EXPECT_EQ(search.proposed(), 1);
  EXPECT_EQ(search.remaining_at_most(), remaining);
  // Recording another candidate than the last proposed is a bug of the caller.
  Candidate other = *first;
  other.index = 7;
  EXPECT_THROW(search.record(other, Outcome::better), std::logic_error);
  search.record(*first, Outcome::better);
  EXPECT_THROW(search.record(*first, Outcome::better), std::logic_error);
}

TEST(CoordinateSearch, TheStartGetsEveryKnobsCurrentValue) {
  CoordinateSearch search({depth_knob()}, json::object());
  EXPECT_EQ(search.incumbent(), (json{{"draft_n_max", 4}}));
  const auto candidate = search.next();
  ASSERT_TRUE(candidate);
  EXPECT_EQ(candidate->incumbent, (json{{"draft_n_max", 4}}));
  EXPECT_EQ(candidate->settings, (json{{"draft_n_max", 5}}));
}

TEST(CoordinateSearch, RemainingIsAnExactBoundWhenEverythingHelps) {
  // Every step better: every value of every knob is measured, as remaining_at_most() said.
  const KnobPlan fa = search_knob("flash_attn", {json("on"), json("off")}, false);
  CoordinateSearch search({depth_knob(), fa, search_knob("ubatch", {512, 1024, 256})},
                          {{"draft_n_max", 4}, {"flash_attn", "on"}, {"ubatch", 512}});
  const int bound = search.remaining_at_most();
  EXPECT_EQ(bound, 7 + 1 + 2);
  // A proposed candidate is no longer to come.
  CoordinateSearch proposing({depth_knob(), fa}, {{"draft_n_max", 4}, {"flash_attn", "on"}});
  ASSERT_TRUE(proposing.next());
  EXPECT_EQ(proposing.remaining_at_most(), 7 + 1 - 1);
  const auto steps =
      walk_surface(search, {}, [](const Candidate&) { return std::optional(Outcome::better); });
  EXPECT_EQ(static_cast<int>(steps.size()), bound);
  // And on a surface where little helps the bound still holds at every step (walk_surface).
  CoordinateSearch few({depth_knob(), fa, search_knob("ubatch", {512, 1024, 256})},
                       {{"draft_n_max", 4}, {"flash_attn", "on"}, {"ubatch", 512}});
  const auto short_walk = walk_surface(few, peak_at("draft_n_max", 4));
  EXPECT_LT(static_cast<int>(short_walk.size()), bound);
}

TEST(CoordinateSearch, OutcomeNames) {
  EXPECT_EQ(to_string(Outcome::better), "better");
  EXPECT_EQ(to_string(Outcome::not_better), "not better");
  EXPECT_EQ(to_string(Outcome::does_not_fit), "does not fit");
  EXPECT_EQ(to_string(Outcome::failed), "failed");
}

}  // namespace
}  // namespace gb10tune::tune
