// launch's check of the server it started: like with like, and learned from only within the
// tolerance (plan/start_check.hpp, plan/expected_memory.hpp).
#include "gb10tune/plan/start_check.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"
#include "support/test_models.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using testing::kMiB;

// The default profile's settings for the tiny qwen35 with its MTP head (issue 22): 589,824
// cells in one pool for 3 slots, draft-mtp with n-max 4, on the CPU.
MemoryPlan default_profile_plan() {
  const auto facts = testing::describe(testing::tiny_qwen35_model());
  EXPECT_TRUE(facts);
  PlanConfig config = testing::report_tuned_config();
  config.cache_ram_bytes = 0;
  const auto plan = make_plan(*facts, config, {});
  EXPECT_TRUE(plan);
  return *plan;
}

ProcessReading idle_reading(std::uint64_t rss) {
  ProcessReading reading;
  reading.vm_rss = rss;
  reading.rss_anon = rss - 4 * kMiB;
  reading.rss_file = 4 * kMiB;
  return reading;
}

// The CPU build's compute buffers (1.16 GiB here, mostly the attention masks of 589,824 cells)
// are malloc'd and untouched by an idle server: what it holds is compared with the rest.
TEST(StartCheck, AnIdleCpuServerIsComparedWithWhatItCanHaveTouched) {
  const MemoryPlan plan = default_profile_plan();
  const ExpectedMemory expected = uncalibrated_memory(plan, PlanBackend::cpu);
  EXPECT_GT(plan.compute_bytes, 1000 * kMiB);
  EXPECT_EQ(expected.on_demand,
            plan.compute_bytes + plan.output_bytes - plan.buffers.output_at_start());
  EXPECT_EQ(expected.full(), plan.load_bytes());

  const std::uint64_t rss = expected.at_load + expected.at_load / 50;  // +2%
  const StartCheck check = check_started_server(plan, PlanBackend::cpu, idle_reading(rss), 3, "t");
  ASSERT_TRUE(check.judgement);
  EXPECT_EQ(check.judgement->verdict, MemoryVerdict::matches);
  EXPECT_NEAR(check.judgement->error_percent, 2.0, 0.01);
  EXPECT_TRUE(check.learn) << check.not_learned_because;
  EXPECT_EQ(check.run.planned_bytes, expected.at_load);
  EXPECT_EQ(check.run.measured_bytes, rss);
  EXPECT_EQ(check.run.on_demand_bytes, expected.on_demand);
  EXPECT_EQ(check.run.slots, 3u);
  const std::string line = describe_start_check(check, plan);
  EXPECT_NE(line.find("error +2.0%"), std::string::npos) << line;
  EXPECT_NE(line.find("touches only as batches use them"), std::string::npos) << line;
}

// A server far from the figure at load, either way, is reported and not learned from.
TEST(StartCheck, AServerFarFromThePlanIsNotLearnedFrom) {
  const MemoryPlan plan = default_profile_plan();
  const ExpectedMemory expected = uncalibrated_memory(plan, PlanBackend::cpu);
  const StartCheck low =
      check_started_server(plan, PlanBackend::cpu, idle_reading(expected.at_load / 2), 3, "t");
  ASSERT_TRUE(low.judgement);
  EXPECT_EQ(low.judgement->verdict, MemoryVerdict::below);
  EXPECT_FALSE(low.learn);
  EXPECT_NE(low.judgement->evidence.find("far above the process"), std::string::npos);
  const std::string line = describe_start_check(low, plan);
  EXPECT_NE(line.find("not recorded as calibration"), std::string::npos) << line;

  // Above the figure at load by 10% but within what batches may touch: no warning, not learned.
  const StartCheck high = check_started_server(
      plan, PlanBackend::cpu, idle_reading(expected.at_load + expected.at_load / 10), 3, "t");
  ASSERT_TRUE(high.judgement);
  EXPECT_EQ(high.judgement->verdict, MemoryVerdict::matches);
  EXPECT_FALSE(high.learn);
  EXPECT_NEAR(high.uncalibrated_error_percent, 10.0, 0.01);

  // A CUDA server without NVML: unknown, nothing to learn.
  const StartCheck unknown =
      check_started_server(plan, PlanBackend::cuda, idle_reading(expected.at_load), 3, "t");
  EXPECT_FALSE(unknown.judgement);
  EXPECT_FALSE(unknown.learn);
  EXPECT_NE(describe_start_check(unknown, plan).find("unknown"), std::string::npos);
}

// The figure: an idle server 9% above the plan's figure at load, within what batches
// and the prompt cache may add. launch's check and verify's finding judge it with one function
// and one tolerance (kPlanTolerancePercent) and say one verdict in the same words; launch does
// not call a plan that holds a miss (it only does not learn a correction from it).
TEST(StartCheck, LaunchAndVerifySayOneVerdictOnTheSameFigure) {
  const MemoryPlan plan = default_profile_plan();
  const ExpectedMemory expected = uncalibrated_memory(plan, PlanBackend::cpu);
  const std::uint64_t rss = expected.at_load + expected.at_load * 9 / 100;
  const StartCheck check = check_started_server(plan, PlanBackend::cpu, idle_reading(rss), 3, "t");
  ASSERT_TRUE(check.judgement);
  EXPECT_EQ(check.judgement->verdict, MemoryVerdict::matches);
  EXPECT_FALSE(check.learn);
  const std::string line = describe_start_check(check, plan);
  EXPECT_EQ(line.rfind("memory: the memory plan matches the process: plan at load", 0), 0u) << line;
  EXPECT_NE(line.find("error +9.0%"), std::string::npos) << line;
  EXPECT_EQ(line.find("misses"), std::string::npos) << line;
  EXPECT_NE(line.find("not recorded as calibration"), std::string::npos) << line;

  // Far below: a miss, in both words.
  const StartCheck low =
      check_started_server(plan, PlanBackend::cpu, idle_reading(expected.at_load / 2), 3, "t");
  const std::string far = describe_start_check(low, plan);
  EXPECT_EQ(far.rfind("memory: the memory plan is far above the process: ", 0), 0u) << far;
  EXPECT_NE(far.find("misses something"), std::string::npos) << far;
}

TEST(StartCheck, TheRunIsRecordedUnderItsKey) {
  testing::TempDir dir;
  const auto path = dir.path() / "calibration.json";
  CalibrationKey key{"qwen35", "b", PlanBackend::cpu, ConfigShape{}};
  CalibrationRun run;
  run.planned_bytes = 100;
  run.measured_bytes = 101;
  const auto one = record_calibration_run(path, key, run);
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(*one, 1u);
  EXPECT_EQ(*record_calibration_run(path, key, run), 2u);
  const auto store = read_calibration_store(path);
  ASSERT_TRUE(store);
  EXPECT_EQ(correction_for(*store, key)->bytes, 1);
  dir.write("broken.json", "{");
  EXPECT_FALSE(record_calibration_run(dir.path() / "broken.json", key, run));
}

}  // namespace
}  // namespace gb10tune::plan
