#include "gb10tune/tune/coordinate_search.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
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
// the incumbent's, worse when below; `refuse` gives the outcome for candidates that are not
// measured (nullopt: measured). Also checks that remaining_at_most() bounds what really came and
// that no point is proposed twice.
std::vector<SearchStep> walk_surface(
    CoordinateSearch& search, const Surface& surface,
    const std::function<std::optional<Outcome>(const Candidate&)>& refuse = {}) {
  std::vector<SearchStep> steps;
  std::vector<int> bounds;
  std::set<std::string> seen{search.incumbent().dump()};
  for (;;) {
    bounds.push_back(search.remaining_at_most());
    const std::optional<Candidate> candidate = search.next();
    if (!candidate) {
      break;
    }
    EXPECT_TRUE(seen.insert(candidate->settings.dump()).second)
        << "proposed twice: " << candidate->settings.dump();
    std::optional<Outcome> outcome = refuse ? refuse(*candidate) : std::nullopt;
    Decision decision{outcome.value_or(Outcome::not_better)};
    if (!outcome) {
      const double here = surface(candidate->settings);
      const double there = surface(candidate->incumbent);
      decision =
          Decision{here > there ? Outcome::better : Outcome::not_better, false, here < there};
    }
    search.record(*candidate, decision);
    steps.push_back({candidate->setting, candidate->value, decision.outcome});
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
  // Decode peaks at n_max 5: from 4 the walk goes 5 (better), 6 (not), and stops: the way up
  // kept a change, so the way down is not walked, and a second pass from 5 finds 6 and 4
  // measured already.
  CoordinateSearch search({depth_knob()}, {{"draft_n_max", 4}});
  const auto steps = walk_surface(search, peak_at("draft_n_max", 5));
  EXPECT_EQ(walked_values(steps), (std::vector<json>{5, 6}));
  EXPECT_EQ(search.pass(), 2);
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
    // 5 better, 6 refused: 7 and 8 are never tried (7 would need more memory still), nor 6
    // again in the second pass.
    EXPECT_EQ(walked_values(steps), (std::vector<json>{5, 6}));
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
    const double here = surface(candidate->settings);
    const double there = surface(candidate->incumbent);
    search.record(*candidate, Decision{here > there ? Outcome::better : Outcome::not_better, false,
                                       here < there});
  }
  // Pass 1: draft_n_max 5 (better), 6; then ubatch from the new incumbent: 1024, 256 (better),
  // 128. Pass 2 from (5, 256): draft_n_max 6 and 4 (new points, worse); ubatch 512 and 128 were
  // measured. Every single step around the winner is worse: no diagonal step.
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_EQ(seen[2].setting, "ubatch");
  EXPECT_EQ(seen[2].value, 1024);
  EXPECT_EQ(seen[2].incumbent, (json{{"draft_n_max", 5}, {"ubatch", 512}, {"model", "m.gguf"}}));
  EXPECT_EQ(seen[2].settings, (json{{"draft_n_max", 5}, {"ubatch", 1024}, {"model", "m.gguf"}}));
  EXPECT_EQ(seen[3].value, 256);
  EXPECT_EQ(seen[4].value, 128);
  EXPECT_EQ(seen[5].pass, 2);
  EXPECT_EQ(seen[5].settings, (json{{"draft_n_max", 6}, {"ubatch", 256}, {"model", "m.gguf"}}));
  EXPECT_EQ(seen[6].settings, (json{{"draft_n_max", 4}, {"ubatch", 256}, {"model", "m.gguf"}}));
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

TEST(CoordinateSearch, RemainingBoundsWhatComesEvenWhenEverythingHelps) {
  // Every step better: passes go on while they keep something, and never measure a point twice;
  // remaining_at_most() (the grid's points never measured) bounds it at every step.
  const KnobPlan fa = search_knob("flash_attn", {json("on"), json("off")}, false);
  CoordinateSearch search({depth_knob(), fa, search_knob("ubatch", {512, 1024, 256})},
                          {{"draft_n_max", 4}, {"flash_attn", "on"}, {"ubatch", 512}});
  EXPECT_EQ(search.remaining_at_most(), 8 * 2 * 3 - 1);
  const auto steps =
      walk_surface(search, {}, [](const Candidate&) { return std::optional(Outcome::better); });
  EXPECT_LE(static_cast<int>(steps.size()), 8 * 2 * 3 - 1);
  EXPECT_GT(search.pass(), 2);
  // A proposed candidate is no longer to come.
  CoordinateSearch proposing({depth_knob(), fa}, {{"draft_n_max", 4}, {"flash_attn", "on"}});
  const int before = proposing.remaining_at_most();
  ASSERT_TRUE(proposing.next());
  EXPECT_EQ(proposing.remaining_at_most(), before - 1);
}

TEST(CoordinateSearch, AKnobWalkedAgainUnderANewIncumbentReachesTheInteractingOptimum) {
  // Flash attention off: the micro-batch is best at 256; on: at 1024, and on is better at every
  // micro-batch. From 128/off the first pass keeps 256, then flash attention; the second pass
  // walks the micro-batch again under flash attention and reaches 1024.
  const std::map<int, double> off{{128, 1.0}, {256, 1.2}, {512, 1.1}, {1024, 1.0}, {2048, 0.9}};
  const std::map<int, double> on{{128, 1.3}, {256, 1.4}, {512, 1.5}, {1024, 1.6}, {2048, 1.5}};
  const Surface surface = [&](const json& s) {
    return (s["flash_attn"] == "on" ? on : off).at(s["ubatch"].get<int>());
  };
  CoordinateSearch search({search_knob("ubatch", {128, 256, 512, 1024, 2048}),
                           search_knob("flash_attn", {json("off"), json("on")}, false)},
                          {{"ubatch", 128}, {"flash_attn", "off"}});
  walk_surface(search, surface);
  EXPECT_EQ(search.incumbent(), (json{{"ubatch", 1024}, {"flash_attn", "on"}}));
}

TEST(CoordinateSearch, APromisingStepDoesNotEndTheWalk) {
  // 5 reads undecided but favours the candidate: the walk goes on to 6, which is better.
  CoordinateSearch search({depth_knob()}, {{"draft_n_max", 4}});
  auto c = search.next();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->value, 5);
  search.record(*c, Decision{Outcome::not_better, true});
  c = search.next();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->value, 6);
  EXPECT_EQ(c->incumbent, (json{{"draft_n_max", 4}}));
  search.record(*c, Outcome::better);
  // An undecided step without promise ends the walk as before.
  c = search.next();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->value, 7);
  search.record(*c, Decision{Outcome::not_better, false});
  // Pass 2 from 6: 7 was measured (not better); down, 5 was promising (the walk goes past it
  // without measuring it again) and 4 is the start, measured: nothing is left.
  EXPECT_FALSE(search.next());
  EXPECT_EQ(search.incumbent(), (json{{"draft_n_max", 6}}));
  EXPECT_EQ(search.proposed(), 3);
}

TEST(CoordinateSearch, UndecidedNeighboursAreTriedTogether) {
  // A ridge: only 512 with flash attention on is better; each alone reads undecided.
  CoordinateSearch search({search_knob("ubatch", {256, 512, 128}),
                           search_knob("flash_attn", {json("off"), json("on")}, false)},
                          {{"ubatch", 256}, {"flash_attn", "off"}});
  std::vector<Candidate> seen;
  for (auto c = search.next(); c; c = search.next()) {
    seen.push_back(*c);
    const bool ridge = c->settings["ubatch"] == 512 && c->settings["flash_attn"] == "on";
    search.record(*c, ridge ? Outcome::better : Outcome::not_better);
  }
  EXPECT_EQ(search.incumbent(), (json{{"ubatch", 512}, {"flash_attn", "on"}}));
  const auto diagonal = std::find_if(seen.begin(), seen.end(), [](const Candidate& c) {
    return c.setting == "ubatch+flash_attn";
  });
  ASSERT_NE(diagonal, seen.end());
  EXPECT_EQ(diagonal->value, (json{512, "on"}));
}

TEST(CoordinateSearch, OutcomeNames) {
  EXPECT_EQ(to_string(Outcome::better), "better");
  EXPECT_EQ(to_string(Outcome::not_better), "not better");
  EXPECT_EQ(to_string(Outcome::does_not_fit), "does not fit");
  EXPECT_EQ(to_string(Outcome::failed), "failed");
}

}  // namespace
}  // namespace gb10tune::tune
