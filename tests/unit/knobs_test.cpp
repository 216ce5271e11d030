#include "gb10tune/tune/knobs.hpp"

#include <gtest/gtest.h>

#include "gb10tune/util/text_file.hpp"

namespace gb10tune::tune {
namespace {

using nlohmann::json;

KnobPlan knob_plan_of(const std::vector<KnobPlan>& plans, std::string_view setting) {
  for (const KnobPlan& plan : plans) {
    if (plan.knob->setting == setting) {
      return plan;
    }
  }
  throw std::runtime_error("no knob " + std::string(setting));
}

KnobContext drafting_knob_context() {
  KnobContext context;
  context.speculative = true;
  context.current = {{"draft_n_max", 4}, {"ubatch", 512}, {"flash_attn", "on"}, {"slots", 1}};
  return context;
}

std::vector<json> knob_values_list(std::initializer_list<json> list) {
  return std::vector<json>(list);
}

TEST(Knobs, TheTableNamesEachKnobsOptionAndRequestField) {
  const std::vector<Knob>& table = knob_table();
  ASSERT_GE(table.size(), 8u);
  EXPECT_EQ(table.front().setting, "draft_n_max");  // the largest effect first (K4)
  const Knob* depth = find_knob("draft_n_max");
  ASSERT_NE(depth, nullptr);
  EXPECT_EQ(depth->server_option, "--spec-draft-n-max");
  EXPECT_EQ(depth->request_field, "speculative.n_max");
  const Knob* p_min = find_knob("draft_p_min");
  ASSERT_NE(p_min, nullptr);
  EXPECT_EQ(p_min->server_option, "--spec-draft-p-min");
  EXPECT_EQ(p_min->request_field, "speculative.p_min");
  EXPECT_EQ(find_knob("threads")->server_option, "--threads");
  EXPECT_TRUE(find_knob("ubatch")->memory_effect);
  EXPECT_TRUE(find_knob("flash_attn")->memory_effect);
  EXPECT_TRUE(find_knob("slots")->memory_effect);
  EXPECT_FALSE(find_knob("draft_p_min")->memory_effect);
  EXPECT_TRUE(find_knob("cache_type_k")->lossy);
  EXPECT_TRUE(find_knob("cache_type_v")->lossy);
  EXPECT_FALSE(find_knob("ubatch")->lossy);
  EXPECT_EQ(find_knob("no_such_knob"), nullptr);
  for (const Knob& knob : table) {
    EXPECT_FALSE(knob.help.empty()) << knob.setting;
    EXPECT_TRUE(knob.server_option.starts_with("--")) << knob.setting;
  }
}

TEST(Knobs, DraftingItselfIsAChoiceOnlyWhereTheServerDrafts) {
  // A draft that is never accepted (random weights on the H200: 463 against 1740 t/s without
  // drafting, docs/tune.md) costs more than it saves: turning it off is a candidate.
  const KnobPlan mtp = knob_plan_of(plan_knobs(drafting_knob_context()), "mtp");
  EXPECT_EQ(mtp.skipped, "");
  EXPECT_FALSE(mtp.ordered);
  EXPECT_EQ(mtp.values, knob_values_list({"auto", "off"}));
  EXPECT_TRUE(find_knob("mtp")->memory_effect);
  KnobContext on = drafting_knob_context();
  on.current["mtp"] = "on";
  EXPECT_EQ(knob_plan_of(plan_knobs(on), "mtp").values, knob_values_list({"on", "off"}));
  KnobContext plain = drafting_knob_context();
  plain.speculative = false;
  EXPECT_NE(knob_plan_of(plan_knobs(plain), "mtp").skipped.find("does not draft"),
            std::string::npos);
  KnobContext prefill = drafting_knob_context();
  prefill.goal = Goal::prefill;
  EXPECT_FALSE(knob_plan_of(plan_knobs(prefill), "mtp").skipped.empty());
}

TEST(Knobs, DraftDepthWalksOutwardFromTheCurrent) {
  const auto plans = plan_knobs(drafting_knob_context());
  ASSERT_EQ(plans.size(), knob_table().size());  // every knob, skipped ones included
  const KnobPlan depth = knob_plan_of(plans, "draft_n_max");
  EXPECT_EQ(depth.skipped, "");
  EXPECT_TRUE(depth.ordered);
  EXPECT_EQ(depth.mode, ApplyMode::restart);  // no /props: restart
  EXPECT_EQ(depth.values, knob_values_list({4, 5, 6, 7, 8, 3, 2, 1}));
  // A current depth beyond the usual range stays the start, and the walk reaches it.
  KnobContext deep = drafting_knob_context();
  deep.current["draft_n_max"] = 10;
  EXPECT_EQ(knob_plan_of(plan_knobs(deep), "draft_n_max").values.front(), 10);
  EXPECT_EQ(knob_plan_of(plan_knobs(deep), "draft_n_max").values.size(), 10u);
  EXPECT_EQ(knob_plan_of(plan_knobs(deep), "draft_n_max").values[1], 9);
}

TEST(Knobs, DraftKnobsOnlyWhenTheServerDrafts) {
  KnobContext plain = drafting_knob_context();
  plain.speculative = false;
  const auto plans = plan_knobs(plain);
  for (const char* key : {"draft_n_max", "draft_p_min"}) {
    const KnobPlan plan = knob_plan_of(plans, key);
    EXPECT_NE(plan.skipped.find("does not draft"), std::string::npos) << key << plan.skipped;
    EXPECT_TRUE(plan.values.empty());
  }
  KnobContext prefill = drafting_knob_context();
  prefill.goal = Goal::prefill;
  EXPECT_NE(knob_plan_of(plan_knobs(prefill), "draft_n_max").skipped, "");
}

TEST(Knobs, MinimumDraftProbability) {
  const KnobContext context = drafting_knob_context();  // no draft_p_min: llama-server's 0
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "draft_p_min").values,
            knob_values_list({0.0, 0.5, 0.75, 0.9}));
  KnobContext set = context;
  set.current["draft_p_min"] = 0.75;
  EXPECT_EQ(knob_plan_of(plan_knobs(set), "draft_p_min").values,
            knob_values_list({0.75, 0.9, 0.5, 0.0}));
  set.current["draft_p_min"] = 0.6;  // a value off the list is the start
  EXPECT_EQ(knob_plan_of(plan_knobs(set), "draft_p_min").values,
            knob_values_list({0.6, 0.75, 0.9, 0.5, 0.0}));
}

TEST(Knobs, MicroBatchAndFlashAttention) {
  KnobContext context = drafting_knob_context();
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "ubatch").values,
            knob_values_list({512, 1024, 2048, 256, 128}));
  context.current["ubatch"] = 300;
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "ubatch").values,
            knob_values_list({300, 512, 1024, 2048, 256, 128}));
  const KnobPlan fa = knob_plan_of(plan_knobs(context), "flash_attn");
  EXPECT_FALSE(fa.ordered);
  EXPECT_EQ(fa.values, knob_values_list({json("on"), json("off")}));
  context.current["flash_attn"] = "auto";
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "flash_attn").values,
            knob_values_list({json("auto"), json("on"), json("off")}));
}

TEST(Knobs, SlotsOnlyForThroughputFromTheConcurrencyToTwiceIt) {
  KnobContext context = drafting_knob_context();
  EXPECT_NE(knob_plan_of(plan_knobs(context), "slots").skipped.find("--goal throughput"),
            std::string::npos);
  context.goal = Goal::throughput;
  context.concurrency = 3;
  context.current["slots"] = 3;
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "slots").values, knob_values_list({3, 4, 5, 6}));
  context.current["slots"] = 4;  // the neighbours on both sides
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "slots").values, knob_values_list({4, 5, 6, 3}));
}

TEST(Knobs, ThreadsOnlyWithWorkOnTheCpuAndKnownCores) {
  KnobContext context = drafting_knob_context();
  context.cpu_cores = 16;
  EXPECT_NE(knob_plan_of(plan_knobs(context), "threads").skipped.find("CPU"), std::string::npos);
  context.work_on_cpu = true;
  // Unset (llama-server's default: a thread per core): cores, then cores − 1, cores / 2.
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "threads").values, knob_values_list({16, 15, 8}));
  context.current["threads"] = 4;
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "threads").values, knob_values_list({4, 8, 15, 16}));
  context.current["threads"] = 2;
  context.cpu_cores = 2;  // cores / 2 = cores − 1 = 1: once
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "threads").values, knob_values_list({2, 1}));
  context.cpu_cores = 16;
  context.current["threads"] = -1;
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "threads").values.front(), 16);
  context.cpu_cores = 0;
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "threads").skipped,
            "the number of CPU cores is unknown");
}

TEST(Knobs, LossyCacheTypesOnlyWhenAllowed) {
  KnobContext context = drafting_knob_context();
  for (const char* key : {"cache_type_k", "cache_type_v"}) {
    const KnobPlan plan = knob_plan_of(plan_knobs(context), key);
    EXPECT_NE(plan.skipped.find("--allow-lossy"), std::string::npos) << plan.skipped;
    EXPECT_TRUE(plan.values.empty());
  }
  context.allow_lossy = true;
  const KnobPlan k = knob_plan_of(plan_knobs(context), "cache_type_k");
  EXPECT_EQ(k.skipped, "");
  EXPECT_FALSE(k.ordered);
  EXPECT_EQ(k.values,
            knob_values_list({json("f16"), json("q8_0")}));  // the launch default f16, then q8_0
  context.current["cache_type_v"] = "q8_0";
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "cache_type_v").values,
            knob_values_list({json("q8_0"), json("f16")}));
}

TEST(Knobs, PerRequestOnlyWhereTheBuildListsTheField) {
  // llama-server 3f545be's /props lists only speculative.types: every knob restarts.
  const auto text = read_text_file(std::string(GB10TUNE_FIXTURES_DIR) +
                                   "/llama-server/captured-2026-08-commit-3f545be/"
                                   "mtp-1slot.props.json");
  ASSERT_TRUE(text);
  const json captured = json::parse(*text);
  ASSERT_TRUE(captured["default_generation_settings"]["params"].contains("speculative.types"));
  EXPECT_FALSE(accepts_per_request(*find_knob("draft_n_max"), captured));
  EXPECT_FALSE(accepts_per_request(*find_knob("draft_p_min"), captured));
  // A build that lists speculative.n_max (flat, as 3f545be writes its keys) takes it per request.
  json listing = captured;
  listing["default_generation_settings"]["params"]["speculative.n_max"] = 4;
  EXPECT_TRUE(accepts_per_request(*find_knob("draft_n_max"), listing));
  EXPECT_FALSE(accepts_per_request(*find_knob("draft_p_min"), listing));
  EXPECT_FALSE(accepts_per_request(*find_knob("ubatch"), listing));  // no request field
  // Nested, as older builds wrote it.
  const json nested = {
      {"default_generation_settings", {{"params", {{"speculative", {{"p_min", 0.75}}}}}}}};
  EXPECT_TRUE(accepts_per_request(*find_knob("draft_p_min"), nested));
  EXPECT_FALSE(accepts_per_request(*find_knob("draft_n_max"), nested));
  EXPECT_FALSE(accepts_per_request(*find_knob("draft_n_max"), json()));
  // The plan follows: n_max per request, p_min by restart.
  KnobContext context = drafting_knob_context();
  context.props = listing;
  const auto plans = plan_knobs(context);
  EXPECT_EQ(knob_plan_of(plans, "draft_n_max").mode, ApplyMode::per_request);
  EXPECT_EQ(knob_plan_of(plans, "draft_p_min").mode, ApplyMode::restart);
  context.props = captured;
  EXPECT_EQ(knob_plan_of(plan_knobs(context), "draft_n_max").mode, ApplyMode::restart);
}

TEST(Knobs, GoalNamesRoundTrip) {
  for (const Goal goal : {Goal::decode, Goal::throughput, Goal::prefill}) {
    EXPECT_EQ(parse_goal(to_string(goal)), goal);
  }
  EXPECT_EQ(to_string(Goal::prefill), "prefill");
  EXPECT_FALSE(parse_goal("speed"));
}

}  // namespace
}  // namespace gb10tune::tune
