#include "gb10tune/plan/memory_plan.hpp"

#include <gtest/gtest.h>

#include "support/captured_header.hpp"
#include "support/test_models.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using gguf::GgmlType;
using testing::gguf_string;
using testing::gguf_uint32;
using testing::report_model;

using testing::kGiB;

model::ModelFacts facts_of(const testing::GgufWriter& w) {
  auto facts = testing::describe(w);
  EXPECT_TRUE(facts) << facts.error().message;
  return *facts;
}

// The report's tuned configuration (K9).
PlanConfig k9() {
  return testing::report_tuned_config();
}

// Recurrent state of the report model per sequence: 48 recurrent layers x
// ((4 - 1) x (6144 + 2 x 16 x 128) + 128 x 6144) f32 values.
constexpr std::uint64_t kRecurrentPerSequence =
    48ull * (3 * (6144 + 2 * 16 * 128) + 128 * 6144) * 4;

TEST(MemoryPlan, ReportCaseIsExactly36GiBOfMainKvPlusWhatTheScriptNeverCounted) {
  const auto plan = make_plan(facts_of(report_model()), k9(), {});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->n_ctx, 589824u);
  EXPECT_EQ(plan->streams, 1u);
  EXPECT_EQ(plan->ctx_per_slot, 589824u);
  EXPECT_EQ(plan->kv_full_bytes, 36 * kGiB);  // 16 layers x 4 heads x 256 x 2 (K,V) x 2 bytes
  EXPECT_EQ(plan->kv_swa_bytes, 0u);
  // The MTP block's own KV in the draft context: 4096 bytes per cell.
  EXPECT_EQ(plan->mtp_kv_bytes, 4096ull * 589824);
  // 3 slots x (1 + 4 rollback snapshots) rows of recurrent state.
  EXPECT_EQ(plan->recurrent_rows, 15u);
  EXPECT_EQ(plan->recurrent_bytes, kRecurrentPerSequence * 15);
  EXPECT_EQ(plan->cache_ram_bytes, 24576ull << 20);
  // Everything but the compute buffers, worked out by hand: no weights (the header has no
  // tensors); KV 38,654,705,664 (36 GiB) + MTP KV 2,415,919,104 + recurrent 2,353,397,760 (15 x
  // 156,893,184); outputs 42,004,480 (the hidden states the draft reads, 5120 x 2048 x 4 bytes,
  // and the draft's own 5120 x 3 x 4; no logits: the header has no vocabulary); the CPU
  // runtime 75,497,472 (18 MiB with no vocabulary, plus 48 bytes x 589,824 cells x 2 caches);
  // the 32 MiB default overhead; the 24 GiB prompt cache. The compute buffers are checked
  // against what llama-server printed in DraftContextComputeIsCountedAsTheServerPrintsIt.
  EXPECT_EQ(plan->total_bytes - plan->compute_bytes, 69'344'882'688u);
  EXPECT_EQ(plan->output_bytes, 42'004'480u);
  EXPECT_EQ(plan->runtime_bytes, 75'497'472u);
  EXPECT_EQ(plan->overhead_bytes, 32u << 20);
  EXPECT_GT(plan->compute_bytes, 0u);
  EXPECT_GT(plan->buffers.mtp.compute(), 0u);  // the draft context has its own graph
  EXPECT_EQ(plan->runtime.device, 0u);         // CPU backend
  EXPECT_FALSE(plan->available_bytes);         // no budget given: not checked
}

// The compute buffers of a qwen35 model with its MTP head served with draft-mtp: the main
// context's and the draft context's, as a real llama-server printed them at -lv 4
// (tests/fixtures/llama-server/memory/cases.json, run qwen35-c32k-np2-kvu-nofa-mtp, CPU build of
// commit 3f545be: `CPU compute buffer size = 596.01 MiB` and, for the draft context, 594.01
// MiB), within the 10% the plan promises for compute buffers (compute_buffers_test.cpp).
TEST(MemoryPlan, DraftContextComputeIsCountedAsTheServerPrintsIt) {
  const nlohmann::json fixture = testing::fixture_json("llama-server/memory/cases.json");
  const auto models = testing::captured_models(fixture.at("models"));
  PlanConfig config;
  config.ctx_total = 32768;
  config.slots = 2;
  config.kv_unified = true;
  config.flash_attention = false;
  config.mtp = true;
  config.draft_n_max = 4;
  config.cache_ram_bytes = 0;
  const auto plan = make_plan(models.at("c-qwen35"), config, {});
  ASSERT_TRUE(plan) << plan.error().message;
  constexpr double kServerMiB = 596.01 + 594.01;
  EXPECT_NEAR(static_cast<double>(plan->compute_bytes) / 1048576.0, kServerMiB, 0.10 * kServerMiB);
}

TEST(MemoryPlan, SeparateStreamsSplitTheContextAcrossSlots) {
  PlanConfig config = k9();
  config.kv_unified = false;
  const auto plan = make_plan(facts_of(report_model()), config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->streams, 3u);
  EXPECT_EQ(plan->ctx_per_slot, 196608u);
  EXPECT_EQ(plan->kv_full_bytes, 36 * kGiB);  // the same cells, in three streams
}

TEST(MemoryPlan, ContextIsPaddedTo256AndRoundedToWholeSlots) {
  PlanConfig config;
  config.ctx_total = 1000;
  config.mtp = false;
  const model::ModelFacts facts = facts_of(report_model());
  auto plan = make_plan(facts, config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->n_ctx, 1024u);
  config.slots = 3;
  config.ctx_total = 1024;
  plan = make_plan(facts, config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->ctx_per_slot, 512u);  // pad(1024 / 3 = 341, 256)
  EXPECT_EQ(plan->n_ctx, 1536u);
  EXPECT_EQ(plan->kv_full_bytes, 65536ull * 512 * 3);
  config.ctx_total = 0;  // the model's training context
  config.slots = 1;
  plan = make_plan(facts, config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->n_ctx, 262144u);
}

TEST(MemoryPlan, UnsetContextIsTheTrainingContextPerStream) {
  // llama-server's fit step asks for n_ctx_train x n_streams when -c is unset.
  PlanConfig config;
  config.mtp = false;
  config.slots = 2;
  const model::ModelFacts facts = facts_of(report_model());
  auto plan = make_plan(facts, config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->n_ctx, 2u * 262144);
  EXPECT_EQ(plan->ctx_per_slot, 262144u);
  config.kv_unified = true;
  plan = make_plan(facts, config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->n_ctx, 262144u);
}

TEST(MemoryPlan, QuantizedCacheRulesOfLlamaInitFromModel) {
  const model::ModelFacts facts = facts_of(report_model());
  PlanConfig config = k9();
  config.cache_v = GgmlType::q8_0;
  config.flash_attention = false;
  auto plan = make_plan(facts, config, {});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("needs flash attention"), std::string::npos);

  // A head size of 16 is not a whole q8_0 block (32 values).
  testing::GgufWriter small;
  small.add("general.architecture", gguf_string("llama"))
      .add("llama.block_count", gguf_uint32(2))
      .add("llama.context_length", gguf_uint32(4096))
      .add("llama.embedding_length", gguf_uint32(64))
      .add("llama.attention.head_count", gguf_uint32(4))
      .add("llama.attention.head_count_kv", gguf_uint32(2));
  config = PlanConfig{};
  config.cache_k = GgmlType::q8_0;
  plan = make_plan(facts_of(small), config, {});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("do not divide the head size 16"), std::string::npos)
      << plan.error().message;
  config.cache_k = GgmlType::f16;
  EXPECT_TRUE(make_plan(facts_of(small), config, {}));
}

TEST(MemoryPlan, MtpOffLoadsNoDraftContextAndNoRollbackState) {
  PlanConfig config = k9();
  config.mtp = false;
  const auto plan = make_plan(facts_of(report_model()), config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->mtp_kv_bytes, 0u);
  EXPECT_EQ(plan->recurrent_rows, 3u);
  ASSERT_FALSE(plan->notes.empty());
  EXPECT_NE(plan->notes.back().find("MTP head but draft-mtp is off"), std::string::npos);
}

TEST(MemoryPlan, MtpOnAModelWithoutTheHeadIsRefused) {
  const auto plan = make_plan(facts_of(report_model(64, 0)), k9(), {});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ExitCode::usage);
  EXPECT_NE(plan.error().message.find("no MTP head"), std::string::npos);
}

TEST(MemoryPlan, QuantizedCacheTypesUseGgmlRowSizes) {
  PlanConfig config = k9();
  config.cache_k = GgmlType::q8_0;  // 1024 values = 32 blocks of 34 bytes
  config.cache_v = GgmlType::q4_0;  // 32 blocks of 18 bytes
  config.draft_cache_k = GgmlType::q8_0;
  config.draft_cache_v = GgmlType::q8_0;
  const auto plan = make_plan(facts_of(report_model()), config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kv_full_bytes, 16ull * (32 * 34 + 32 * 18) * 589824);
  EXPECT_EQ(plan->mtp_kv_bytes, 1ull * (32 * 34 + 32 * 34) * 589824);
}

TEST(MemoryPlan, DoesNotFitSaysWhatWould) {
  PlanBudget budget;
  budget.mem_available = 60'000'000'000ull;
  budget.reserve_bytes = 12'000'000'000ull;
  const model::ModelFacts facts = facts_of(report_model());
  PlanConfig config = k9();
  config.kv_unified = false;  // per-slot streams: fewer slots means less KV
  const auto plan = make_plan(facts, config, budget);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->fits);
  EXPECT_EQ(*plan->available_bytes, 48'000'000'000ull);
  EXPECT_LT(*plan->margin_bytes, 0);
  // 36 GiB + 2.25 GiB + 2.2 GiB + buffers + 24 GiB for 3 slots: 1 slot of 196608 fits in 48 GB.
  EXPECT_EQ(plan->max_slots_that_fit, 1u);
  ASSERT_GT(plan->max_ctx_per_slot_that_fits, 0u);
  EXPECT_EQ(plan->max_ctx_per_slot_that_fits % 256, 0u);
  // The answer is the largest: it fits, and 256 cells more do not.
  PlanConfig at = config;
  at.ctx_total = plan->max_ctx_per_slot_that_fits * 3;
  EXPECT_TRUE(make_plan(facts, at, budget)->fits);
  at.ctx_total = (plan->max_ctx_per_slot_that_fits + 256) * 3;
  EXPECT_FALSE(make_plan(facts, at, budget)->fits);
}

TEST(MemoryPlan, ReserveLargerThanMemoryLeavesNothing) {
  PlanBudget budget;
  budget.mem_available = 8'000'000'000ull;
  const auto plan = make_plan(facts_of(report_model()), k9(), budget);
  ASSERT_TRUE(plan);
  EXPECT_EQ(*plan->available_bytes, 0u);
  EXPECT_FALSE(plan->fits);
  EXPECT_EQ(plan->max_slots_that_fit, 0u);
  EXPECT_EQ(plan->max_ctx_per_slot_that_fits, 0u);
}

TEST(MemoryPlan, SlidingWindowLayersHoldOnlyTheWindow) {
  testing::GgufWriter w;
  w.add("general.architecture", gguf_string("gemma3"))
      .add("gemma3.block_count", gguf_uint32(62))
      .add("gemma3.context_length", gguf_uint32(131072))
      .add("gemma3.embedding_length", gguf_uint32(5376))
      .add("gemma3.attention.head_count", gguf_uint32(32))
      .add("gemma3.attention.head_count_kv", gguf_uint32(16))
      .add("gemma3.attention.key_length", gguf_uint32(128))
      .add("gemma3.attention.value_length", gguf_uint32(128))
      .add("gemma3.attention.sliding_window", gguf_uint32(1000));
  const model::ModelFacts facts = facts_of(w);
  PlanConfig config;
  config.ctx_total = 32768;
  config.slots = 2;
  config.kv_unified = true;
  auto plan = make_plan(facts, config, {});
  ASSERT_TRUE(plan) << plan.error().message;
  // 62 layers, every 6th global (il % 6 == 5): 10 full-attention layers, 52 sliding-window.
  ASSERT_EQ(facts.kv_layer_count(model::KvScope::full_attention), 10u);
  ASSERT_EQ(facts.kv_layer_count(model::KvScope::sliding_window), 52u);
  EXPECT_EQ(plan->full_cells, 32768u);
  EXPECT_EQ(plan->swa_cells, 2560u);  // pad(1000 x 2 slots + 512 = 2512, 256)
  const std::uint64_t per_layer = 16 * 128 * 2 * 2;
  EXPECT_EQ(plan->kv_swa_bytes,
            per_layer * facts.kv_layer_count(model::KvScope::sliding_window) * 2560);
  EXPECT_EQ(plan->kv_full_bytes,
            per_layer * facts.kv_layer_count(model::KvScope::full_attention) * 32768);
  config.swa_full = true;
  plan = make_plan(facts, config, {});
  EXPECT_EQ(plan->swa_cells, 32768u);
  // The cell metadata of both caches: 48 bytes per cell each.
  EXPECT_EQ(plan->kv_cells_bytes, 48u * (32768 + 32768));
}

// llama.cpp keeps 48 bytes of bookkeeping per cell of every KV cache (llama_kv_cells), written
// when the cache is created: 54 MiB for the two caches of the report's 589,824 cells. Measured
// on the CPU build (docs/memory-plan.md): an idle server's RSS grows by 48 bytes per cell of
// each cache beyond the KV bytes themselves.
TEST(MemoryPlan, EveryKvCacheCellCarriesItsMetadataInTheRuntime) {
  const model::ModelFacts facts = facts_of(report_model());
  PlanConfig config = k9();
  auto plan = make_plan(facts, config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kv_cells_bytes, 48ull * 589824 * 2);  // main and MTP draft caches
  // The CPU build's own 18 MiB (the header has no vocabulary: nothing for the tokenizer's
  // tables; runtime_memory.cpp has the measurements) plus the two caches' 56,623,104 bytes.
  EXPECT_EQ(plan->runtime.host, 18'874'368u + 56'623'104u);
  config.mtp = false;
  config.kv_unified = false;  // three streams of 196,608 cells: the same cells in all
  plan = make_plan(facts, config, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kv_cells_bytes, 48ull * 589824);
}

TEST(MemoryPlan, CacheTypeNames) {
  EXPECT_EQ(parse_cache_type("q8_0"), GgmlType::q8_0);
  EXPECT_EQ(parse_cache_type("F16"), GgmlType::f16);
  EXPECT_FALSE(parse_cache_type("q4_K"));  // a weight type, not a cache type
  EXPECT_FALSE(parse_cache_type("fp8"));
}

TEST(MemoryPlan, ZeroSlotsAndUnsupportedArchitecturesAreUsageErrors) {
  PlanConfig config;
  config.slots = 0;
  EXPECT_EQ(make_plan(facts_of(report_model()), config, {}).error().code, ExitCode::usage);
  testing::GgufWriter w;
  w.add("general.architecture", gguf_string("mamba2"));
  const auto unknown = make_plan(facts_of(w), PlanConfig{}, {});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("mamba2"), std::string::npos) << unknown.error().message;
}

}  // namespace
}  // namespace gb10tune::plan
