#include "gb10tune/plan/fit.hpp"

#include <gtest/gtest.h>

#include "gb10tune/launch/launch_fit.hpp"
#include "support/test_models.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using testing::gguf_string;
using testing::gguf_uint32;

constexpr std::uint64_t kGB = 1'000'000'000ull;
using testing::kMiB;

model::ModelFacts facts_of(const testing::GgufWriter& w, std::uint64_t weight_bytes) {
  auto facts = testing::describe(w);
  EXPECT_TRUE(facts) << facts.error().message;
  facts->weight_bytes = weight_bytes;
  return *facts;
}

testing::GgufWriter small_llama() {
  return testing::llama_header(8, 131072, 2048, 16, 4);
}

// A random-weight llama of a few MB: 2 layers, 2 KV heads of 64 values (1 KiB of f16 KV per cell).
testing::GgufWriter tiny_llama() {
  return testing::llama_header(2, 4096, 256, 4, 2);
}

testing::GgufWriter gemma_swa() {
  testing::GgufWriter w;
  w.add("general.architecture", gguf_string("gemma3"))
      .add("gemma3.block_count", gguf_uint32(62))
      .add("gemma3.context_length", gguf_uint32(131072))
      .add("gemma3.embedding_length", gguf_uint32(5376))
      .add("gemma3.attention.head_count", gguf_uint32(32))
      .add("gemma3.attention.head_count_kv", gguf_uint32(16))
      .add("gemma3.attention.key_length", gguf_uint32(128))
      .add("gemma3.attention.value_length", gguf_uint32(128))
      .add("gemma3.attention.sliding_window", gguf_uint32(1024));
  return w;
}

// A fit request over `base` configured as launch configures it (launch::config_for_knobs): -c =
// ctx per slot x slots, a unified pool when the build has -kvu (`unified`) and there are several
// slots (kv_unified auto).
FitRequest request_for(const PlanConfig& base, const FitKnobs& asked, bool unified) {
  FitRequest r;
  r.asked = asked;
  r.configure = [base, unified](const FitKnobs& k) {
    return launch::config_for_knobs(base, k, unified, "auto");
  };
  return r;
}

PlanBudget budget_of(std::uint64_t available, std::uint64_t reserve = 0) {
  PlanBudget b;
  b.mem_available = available + reserve;
  b.reserve_bytes = reserve;
  return b;
}

void set_knob(FitKnobs& k, FitKnob knob, std::uint64_t value) {
  if (knob == FitKnob::ctx_per_slot) {
    k.ctx_per_slot = value;
  } else if (knob == FitKnob::slots) {
    k.slots = static_cast<std::uint32_t>(value);
  } else {
    k.cache_ram_bytes = value;
  }
}

// One step of a knob: 256 cells, one slot, one MiB.
std::uint64_t step_of(FitKnob knob) {
  return knob == FitKnob::ctx_per_slot ? 256 : knob == FitKnob::slots ? 1 : kMiB;
}

struct GridModel {
  std::string name;
  model::ModelFacts facts;
  bool mtp = false;
};

TEST(Fit, NeverAboveTheBudgetAndMaximalInItsFirstPriorityOverAGrid) {
  const std::vector<GridModel> models = {
      {"qwen35 hybrid + MTP, 17 GB", facts_of(testing::report_model(), 17 * kGB), true},
      {"qwen35 hybrid, 3 GB", facts_of(testing::report_model(), 3 * kGB), false},
      {"llama, 2 MB", facts_of(tiny_llama(), 2'000'000), false},
      {"llama, 8 GB", facts_of(small_llama(), 8 * kGB), false},
      {"gemma3 sliding window, 25 GB", facts_of(gemma_swa(), 25 * kGB), false},
  };
  const std::vector<std::uint64_t> budgets = {kGB / 2,  3 * kGB,  9 * kGB,
                                              13 * kGB, 30 * kGB, 100 * kGB};
  const std::vector<std::vector<FitKnob>> orders = {
      {FitKnob::ctx_per_slot, FitKnob::slots, FitKnob::cache_ram},
      {FitKnob::slots, FitKnob::ctx_per_slot, FitKnob::cache_ram},
      {FitKnob::cache_ram, FitKnob::ctx_per_slot, FitKnob::slots}};
  int fitted = 0;
  int refused = 0;
  int lowered = 0;
  for (const GridModel& m : models) {
    for (const bool unified : {true, false}) {
      for (const std::uint64_t available : budgets) {
        for (const auto& order : orders) {
          PlanConfig base;
          base.mtp = m.mtp;
          base.draft_n_max = 4;
          base.overhead_bytes = 500'000'000;
          const FitKnobs asked{196608, 3, 24576 * kMiB};
          FitRequest request = request_for(base, asked, unified);
          request.priority = order;
          const PlanBudget budget = budget_of(available, 12 * kGB);
          const auto result = fit_plan(m.facts, request, budget);
          const std::string where = m.name + (unified ? ", -kvu" : ", no -kvu") + ", available " +
                                    std::to_string(available) + ", first " +
                                    std::string(fit_knob_key(order.front()));
          if (!result) {
            ++refused;
            EXPECT_EQ(result.error().code, ExitCode::memory_refused) << where;
            // Refused only when the smallest configuration does not fit either.
            const auto smallest = make_plan(m.facts, request.configure({256, 1, 0}), budget);
            ASSERT_TRUE(smallest) << where;
            EXPECT_FALSE(smallest->fits) << where;
            continue;
          }
          ++fitted;
          lowered += result->given_up.empty() ? 0 : 1;
          EXPECT_TRUE(result->plan.fits) << where;
          EXPECT_LE(result->plan.total_bytes, available) << where;
          for (const FitKnob knob : kDefaultFitPriority) {
            EXPECT_LE(result->chosen.get(knob), asked.get(knob)) << where;
          }
          // Maximal in the first priority: one step more, with the others at their smallest,
          // does not fit.
          const FitKnob first = order.front();
          if (result->chosen.get(first) < asked.get(first)) {
            FitKnobs more{256, 1, 0};
            set_knob(more, first, result->chosen.get(first) + step_of(first));
            const auto bigger = make_plan(m.facts, request.configure(more), budget);
            ASSERT_TRUE(bigger) << where;
            EXPECT_FALSE(bigger->fits) << where << ": " << result->chosen.get(first);
          }
        }
      }
    }
  }
  // The grid covers all three outcomes.
  EXPECT_GT(refused, 0);
  EXPECT_GT(lowered, 0);
  EXPECT_GT(fitted, lowered);
}

TEST(Fit, AskedSettingsThatFitAreKept) {
  const auto facts = facts_of(small_llama(), 2'000'000);
  const FitKnobs asked{32768, 2, 1024 * kMiB};
  const auto result = fit_plan(facts, request_for(PlanConfig{}, asked, true), budget_of(64 * kGB));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(result->given_up.empty());
  EXPECT_EQ(result->chosen.ctx_per_slot, 32768u);
  EXPECT_EQ(result->chosen.slots, 2u);
  EXPECT_EQ(result->chosen.cache_ram_bytes, 1024 * kMiB);
}

// The first example: a 2 MB llama on a 25 GB machine with the dense profile's 3 x 192K
// cells and a 24 GiB prompt cache. The context stays; the prompt cache gives way.
TEST(Fit, SmallModelOnASmallMachineKeepsTheContextAndLowersThePromptCache) {
  const auto facts = facts_of(tiny_llama(), 2'000'000);
  PlanConfig base;
  base.overhead_bytes = 6 * kGB;
  const FitKnobs asked{196608, 3, 24576 * kMiB};
  const PlanBudget budget = budget_of(25 * kGB - 12 * kGB, 12 * kGB);
  const auto result = fit_plan(facts, request_for(base, asked, true), budget);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->chosen.ctx_per_slot, 196608u);
  EXPECT_EQ(result->chosen.slots, 3u);
  ASSERT_EQ(result->given_up.size(), 1u);
  EXPECT_EQ(result->given_up[0].knob, FitKnob::cache_ram);
  EXPECT_LT(result->chosen.cache_ram_bytes, 24576 * kMiB);
  EXPECT_GT(result->chosen.cache_ram_bytes, 0u);
  EXPECT_EQ(result->chosen.cache_ram_bytes % kMiB, 0u);
  EXPECT_LE(result->plan.total_bytes, *result->plan.available_bytes);
  // One MiB more of prompt cache would not fit: the cache is as large as it can be.
  FitKnobs more = result->chosen;
  more.cache_ram_bytes += kMiB;
  const auto request = request_for(base, asked, true);
  EXPECT_FALSE(make_plan(facts, request.configure(more), budget)->fits);
}

TEST(Fit, KnobsTheCallerFixesStayAsAsked) {
  const auto facts = facts_of(testing::report_model(), 17 * kGB);
  PlanConfig base;
  base.overhead_bytes = 0;
  const FitKnobs asked{196608, 3, 0};
  FitRequest request = request_for(base, asked, true);
  request.adjustable = {false, true, true};  // the context per slot was given explicitly
  const auto result = fit_plan(facts, request, budget_of(40 * kGB));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->chosen.ctx_per_slot, 196608u);
  EXPECT_LT(result->chosen.slots, 3u);
  ASSERT_EQ(result->given_up.size(), 1u);
  EXPECT_EQ(result->given_up[0].knob, FitKnob::slots);
}

TEST(Fit, NothingFitsNamesTheFloorAndUnknownBudgetIsAnError) {
  const auto facts = facts_of(small_llama(), 50 * kGB);
  const FitKnobs asked{4096, 1, 0};
  const auto result = fit_plan(facts, request_for(PlanConfig{}, asked, true), budget_of(10 * kGB));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ExitCode::memory_refused);
  EXPECT_NE(result.error().message.find("nothing fits"), std::string::npos);
  EXPECT_NE(result.error().message.find("256 cells per slot"), std::string::npos)
      << result.error().message;

  const auto unknown = fit_plan(facts, request_for(PlanConfig{}, asked, true), PlanBudget{});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("MemAvailable"), std::string::npos);
}

TEST(Fit, NothingAdjustableIsRefusedNamingWhatWasFixed) {
  const auto facts = facts_of(small_llama(), 8 * kGB);
  FitRequest request = request_for(PlanConfig{}, {131072, 4, 0}, true);
  request.adjustable = {false, false, false};
  const auto result = fit_plan(facts, request, budget_of(9 * kGB));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ExitCode::memory_refused);
  EXPECT_NE(result.error().message.find("ctx_per_slot, slots, cache_ram_mib"), std::string::npos)
      << result.error().message;
}

TEST(Fit, KnobNamesRoundTrip) {
  for (const FitKnob knob : kDefaultFitPriority) {
    EXPECT_EQ(parse_fit_knob(fit_knob_key(knob)), knob);
  }
  EXPECT_FALSE(parse_fit_knob("ctx"));
}

}  // namespace
}  // namespace gb10tune::plan
