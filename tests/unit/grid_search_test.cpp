// The exhaustive grid: every combination once, the start's excepted; knobs that need a restart
// vary slowest; refused points never end it; it finds an optimum that only a change of two
// knobs at once reaches, where the coordinate search stops short; and the strategy's names.
#include "gb10tune/tune/grid_search.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "gb10tune/tune/coordinate_search.hpp"

namespace gb10tune::tune {
namespace {

using nlohmann::json;

KnobPlan grid_knob(std::string_view setting, std::vector<json> values,
                   ApplyMode mode = ApplyMode::restart, bool ordered = true) {
  KnobPlan plan;
  plan.knob = find_knob(setting);
  plan.values = std::move(values);
  plan.ordered = ordered;
  plan.mode = mode;
  return plan;
}

// Runs `search` to its end: a candidate is better when `figure` is above the incumbent's;
// returns every candidate's settings in order and checks the bound on what is left.
std::vector<json> run_grid(Search& search, const std::function<double(const json&)>& figure) {
  std::vector<json> seen;
  for (;;) {
    const int left = search.remaining_at_most();
    const std::optional<Candidate> candidate = search.next();
    if (!candidate) {
      EXPECT_EQ(left, 0);
      break;
    }
    EXPECT_EQ(search.remaining_at_most(), left - 1) << "once proposed, it is not left";
    search.record(*candidate, figure(candidate->settings) > figure(candidate->incumbent)
                                  ? Outcome::better
                                  : Outcome::not_better);
    seen.push_back(candidate->settings);
  }
  return seen;
}

TEST(GridSearch, ProposesEveryCombinationOnceButTheStart) {
  GridSearch grid({grid_knob("ubatch", {512, 1024, 256}),
                   grid_knob("flash_attn", {"on", "off"}, ApplyMode::restart, false)},
                  {{"ubatch", 512}, {"flash_attn", "on"}});
  EXPECT_EQ(grid.size(), 6u);
  EXPECT_EQ(grid.remaining_at_most(), 5);
  const std::vector<json> seen = run_grid(grid, [](const json&) { return 0.0; });
  ASSERT_EQ(seen.size(), 5u);
  std::set<std::string> distinct;
  for (const json& s : seen) {
    distinct.insert(s.dump());
    EXPECT_NE(s, (json{{"ubatch", 512}, {"flash_attn", "on"}}));
  }
  EXPECT_EQ(distinct.size(), 5u);
  // The last knob varies fastest.
  EXPECT_EQ(seen[0], (json{{"ubatch", 512}, {"flash_attn", "off"}}));
  EXPECT_EQ(seen[1], (json{{"ubatch", 1024}, {"flash_attn", "on"}}));
  EXPECT_EQ(grid.proposed(), 5);
}

TEST(GridSearch, PerRequestKnobsVaryFastestToShareAServer) {
  // Depth is per request, the micro-batch needs a restart: depth must be the inner loop.
  GridSearch grid({grid_knob("draft_n_max", {4, 5, 3}, ApplyMode::per_request),
                   grid_knob("ubatch", {512, 1024})},
                  {{"draft_n_max", 4}, {"ubatch", 512}});
  const std::vector<json> seen = run_grid(grid, [](const json&) { return 0.0; });
  ASSERT_EQ(seen.size(), 5u);
  int ubatch_changes = 0;
  json last = {{"ubatch", 512}};
  for (const json& s : seen) {
    ubatch_changes += s["ubatch"] != last["ubatch"] ? 1 : 0;
    last = s;
  }
  EXPECT_EQ(ubatch_changes, 1);
}

TEST(GridSearch, NamesTheChangedKnobs) {
  GridSearch grid({grid_knob("ubatch", {512, 1024}),
                   grid_knob("flash_attn", {"on", "off"}, ApplyMode::restart, false)},
                  {{"ubatch", 512}, {"flash_attn", "on"}});
  std::vector<Candidate> candidates;
  while (const auto c = grid.next()) {
    candidates.push_back(*c);
    grid.record(*c, Outcome::not_better);
  }
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(candidates[0].setting, "flash_attn");
  EXPECT_EQ(candidates[0].value, "off");
  EXPECT_EQ(candidates[1].setting, "ubatch");
  EXPECT_EQ(candidates[1].value, 1024);
  EXPECT_EQ(candidates[2].setting, "ubatch+flash_attn");
  EXPECT_EQ(candidates[2].value, (json{1024, "off"}));
}

TEST(GridSearch, FindsWhatOnlyTwoChangesTogetherReach) {
  // A ridge: each knob alone is worse than the start, both changed together are the best. The
  // grid finds it; the coordinate search too, by its diagonal step, where the single steps are
  // not known to be worse (this oracle says only better or not; the coordinate search's own
  // tests show that a step worse beyond the noise is not combined).
  const auto figure = [](const json& s) {
    const bool big = s["ubatch"] == 1024;
    const bool off = s["flash_attn"] == "off";
    return big && off ? 2.0 : (big || off ? 0.5 : 1.0);
  };
  const std::vector<KnobPlan> knobs = {
      grid_knob("ubatch", {512, 1024}),
      grid_knob("flash_attn", {"on", "off"}, ApplyMode::restart, false)};
  const json start = {{"ubatch", 512}, {"flash_attn", "on"}};
  GridSearch grid(knobs, start);
  run_grid(grid, figure);
  EXPECT_EQ(grid.incumbent(), (json{{"ubatch", 1024}, {"flash_attn", "off"}}));
  CoordinateSearch coordinate(knobs, start);
  run_grid(coordinate, figure);
  EXPECT_EQ(coordinate.incumbent(), grid.incumbent());
}

TEST(GridSearch, RefusedPointsDoNotEndItAndAreNeverKept) {
  GridSearch grid({grid_knob("ubatch", {512, 1024, 2048, 256})}, {{"ubatch", 512}});
  std::vector<json> values;
  while (const auto c = grid.next()) {
    values.push_back(c->value);
    grid.record(*c, c->value == 1024  ? Outcome::does_not_fit
                    : c->value == 256 ? Outcome::better
                                      : Outcome::failed);
  }
  EXPECT_EQ(values, (std::vector<json>{1024, 2048, 256}));
  EXPECT_EQ(grid.incumbent(), (json{{"ubatch", 256}}));
}

TEST(GridSearch, NextWithoutRecordRepeatsAndARecordOutOfTurnThrows) {
  GridSearch grid({grid_knob("ubatch", {512, 1024, 256})}, {{"ubatch", 512}});
  const auto first = grid.next();
  const auto again = grid.next();
  ASSERT_TRUE(first && again);
  EXPECT_EQ(first->index, again->index);
  Candidate other = *first;
  other.index = 7;
  EXPECT_THROW(grid.record(other, Outcome::better), std::logic_error);
  grid.record(*first, Outcome::not_better);
  EXPECT_EQ(grid.next()->value, 256);
}

TEST(GridSearch, SkippedKnobsAndSingleValuesAreNotGridded) {
  KnobPlan skipped = grid_knob("draft_n_max", {4, 5});
  skipped.skipped = "the server does not draft";
  GridSearch grid({skipped, grid_knob("threads", {8}), grid_knob("ubatch", {512, 1024})},
                  {{"ubatch", 512}});
  EXPECT_EQ(grid.size(), 2u);
  EXPECT_FALSE(grid.incumbent().contains("draft_n_max"));
}

TEST(Strategy, NamesParseBackAndMakeTheirSearch) {
  for (const Strategy strategy : {Strategy::coordinate, Strategy::grid}) {
    EXPECT_EQ(parse_strategy(to_string(strategy)), strategy);
  }
  EXPECT_FALSE(parse_strategy("random"));
  const std::vector<KnobPlan> knobs = {
      grid_knob("ubatch", {512, 1024, 256}),
      grid_knob("flash_attn", {"on", "off"}, ApplyMode::restart, false)};
  const json start = {{"ubatch", 512}, {"flash_attn", "on"}};
  EXPECT_EQ(make_search(Strategy::grid, knobs, start)->remaining_at_most(), 5);
  // The coordinate search bounds what is to come by the points never measured: all 5 too.
  EXPECT_EQ(make_search(Strategy::coordinate, knobs, start)->remaining_at_most(), 5);
}

TEST(RestrictKnobs, KeepsTheNamedAndSaysWhyTheOthersAreNot) {
  std::vector<KnobPlan> plans = {grid_knob("ubatch", {512, 1024}),
                                 grid_knob("flash_attn", {"on", "off"}),
                                 grid_knob("draft_n_max", {})};
  plans[2].skipped = "the server does not draft";
  ASSERT_TRUE(restrict_knobs(plans, {"ubatch", "draft_n_max"}).ok());
  EXPECT_EQ(plans[0].skipped, "");
  EXPECT_EQ(plans[1].skipped, "not among --knobs");
  EXPECT_TRUE(plans[1].values.empty());
  EXPECT_EQ(plans[2].skipped, "the server does not draft");
  std::vector<KnobPlan> all = {grid_knob("ubatch", {512, 1024})};
  ASSERT_TRUE(restrict_knobs(all, {}).ok());
  EXPECT_EQ(all[0].skipped, "");
}

TEST(RestrictKnobs, AnUnknownNameIsAUsageErrorListingTheKnobs) {
  std::vector<KnobPlan> plans = {grid_knob("ubatch", {512, 1024})};
  const Status status = restrict_knobs(plans, {"ubatch", "micro_batch"});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ExitCode::usage);
  EXPECT_NE(status.error().message.find("--knobs micro_batch: no such knob"), std::string::npos)
      << status.error().message;
  EXPECT_NE(status.error().message.find("draft_n_max, draft_p_min, mtp, ubatch"),
            std::string::npos);
  EXPECT_EQ(plans[0].skipped, "");
}

}  // namespace
}  // namespace gb10tune::tune
