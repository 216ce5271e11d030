// The calibration replayed on what the real CPU llama-server held (issue 22, item 8):
// tests/fixtures/llama-server/memory/calibration-cpu.json has, per run, the model header, the
// settings launch chose, the server's buffer lines (-lv 4), its memory once loaded and idle
// (what launch measures) and after a prompt longer than one micro-batch on every slot at once
// (VmHWM, the peak). Each run goes through launch's check, the store, the next plan and verify.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gb10tune/plan/start_check.hpp"
#include "gb10tune/verify/checks.hpp"
#include "support/captured_header.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

// The process's memory as /proc/<pid>/status showed it (kB figures).
sys::ProcessMemory status_of(const json& figures) {
  sys::ProcessMemory memory;
  memory.rss_anon = figures.at("anon_kib").get<std::uint64_t>() << 10;
  memory.rss_file = figures.at("file_kib").get<std::uint64_t>() << 10;
  memory.rss_shmem = figures.at("shmem_kib").get<std::uint64_t>() << 10;
  memory.vm_rss = memory.rss_anon + memory.rss_file + memory.rss_shmem;
  memory.vm_hwm = figures.at("hwm_kib").get<std::uint64_t>() << 10;
  memory.source = "status";
  return memory;
}

// The launch settings of a run: the captured config plus the prompt cache and margin launch
// planned with.
PlanConfig launch_config_of(const json& run) {
  PlanConfig config = testing::captured_plan_config(run.at("config"));
  config.cache_ram_bytes = run.at("config").at("cache_ram_mib").get<std::uint64_t>() << 20;
  config.overhead_bytes = kDefaultOverheadBytes;
  return config;
}

// verify's finding for a reading of the server started with `plan`, as its launch record says.
verify::Finding verify_reading(const MemoryPlan& plan, const sys::ProcessMemory& memory) {
  const ExpectedMemory expected = expected_memory(plan, PlanBackend::cpu);
  verify::Expectations e;
  e.weights_bytes = plan.weights_bytes;
  e.load_bytes = expected.full();
  e.on_demand_bytes = expected.on_demand;
  e.cache_ram_bytes = plan.cache_ram_bytes;
  e.backend = "cpu";
  verify::ProcessSnapshot snapshot;
  snapshot.process.stat.pid = 7;
  snapshot.memory = memory;
  const auto findings = verify::check_memory(snapshot, gpu::NvmlReport{}, e);
  EXPECT_EQ(findings.size(), 2u);
  return findings.back();
}

TEST(CalibrationReplay, RealCpuServersNeverCalibrateThePlanBelowTheirPeak) {
  const json doc = testing::fixture_json("llama-server/memory/calibration-cpu.json");
  ASSERT_TRUE(doc.contains("runs"));
  ASSERT_GE(doc.at("runs").size(), 2u);
  for (const json& run : doc.at("runs")) {
    const std::string name = run.at("name");
    SCOPED_TRACE(name);
    const auto facts = testing::describe(
        testing::captured_header(doc.at("models").at(run.at("model").get<std::string>())),
        name + ".gguf");
    ASSERT_TRUE(facts) << facts.error().message;
    PlanConfig config = launch_config_of(run);
    const auto plan = make_plan(*facts, config, {});
    ASSERT_TRUE(plan) << plan.error().message;
    // The plan's buffers are the server's, as its -lv 4 lines printed them.
    const json& log = run.at("log");
    EXPECT_NEAR(static_cast<double>(plan->cache_bytes()) / 1048576.0,
                log.at("kv_and_state_mib").get<double>(), 0.02);
    const double compute_mib = log.at("compute_mib").get<double>();
    EXPECT_NEAR(static_cast<double>(plan->compute_bytes) / 1048576.0, compute_mib,
                std::max(0.10 * compute_mib, 16.0));

    // launch: the idle server against what it can have touched, learned from only within 5%.
    const sys::ProcessMemory idle = status_of(run.at("idle"));
    const StartCheck check = check_started_server(*plan, PlanBackend::cpu,
                                                  process_reading(idle, {}, 7), config.slots, "");
    ASSERT_TRUE(check.judgement);
    EXPECT_NE(check.judgement->verdict, MemoryVerdict::below) << check.judgement->evidence;
    EXPECT_EQ(check.learn, run.at("learned").get<bool>()) << check.judgement->evidence;
    EXPECT_EQ(verify_reading(*plan, idle).severity, verify::Severity::ok)
        << verify_reading(*plan, idle).evidence;

    // The peak after a prompt longer than one micro-batch on every slot at once.
    const sys::ProcessMemory busy = status_of(run.at("after_prompts"));
    const std::uint64_t peak = *busy.vm_hwm;
    const std::uint64_t planned = plan->total_bytes - plan->cache_ram_bytes;
    EXPECT_GE(plan->load_bytes(), peak);
    EXPECT_EQ(verify_reading(*plan, busy).severity, verify::Severity::ok)
        << verify_reading(*plan, busy).evidence;
    if (run.at("full_graph_touched").get<bool>()) {
      // Every compute buffer was in use: the plan is within 5% of the peak.
      EXPECT_LE(static_cast<double>(planned), 1.05 * static_cast<double>(peak));
    }

    // The next launch of the same settings: what was learned (if anything) is applied, and the
    // plan stays above the peak.
    CalibrationStore store;
    const CalibrationKey key = calibration_key(*facts, "3f545be", config);
    if (check.learn) {
      store.add(key, check.run);
    }
    const auto correction = correction_for(store, key);
    EXPECT_EQ(correction.has_value(), check.learn);
    config.calibration_bytes = correction ? correction->bytes : 0;
    const auto calibrated = make_plan(*facts, config, {});
    ASSERT_TRUE(calibrated);
    EXPECT_GE(calibrated->total_bytes - calibrated->cache_ram_bytes, peak)
        << "calibration " << calibrated->calibration_bytes;
    EXPECT_EQ(verify_reading(*calibrated, busy).severity, verify::Severity::ok);
    const sys::ProcessMemory again = status_of(run.at("second_launch_idle"));
    EXPECT_EQ(verify_reading(*calibrated, again).severity, verify::Severity::ok)
        << verify_reading(*calibrated, again).evidence;

    // The calibration before the fix learned the idle process against the whole figure at
    // load (the untouched compute buffers included), which put the next plan below the peak.
    const std::int64_t before =
        static_cast<std::int64_t>(idle.vm_rss) - static_cast<std::int64_t>(plan->load_bytes());
    EXPECT_LT(static_cast<std::int64_t>(planned) + before, static_cast<std::int64_t>(peak));
  }
}

// An idle server's RSS grows with the context by the KV bytes and 48 bytes per cell of each KV
// cache (the cells' metadata): the plan's figure at load grows by the same.
TEST(CalibrationReplay, TheIdleServerGrowsWithTheContextAsThePlanAtLoad) {
  const json doc = testing::fixture_json("llama-server/memory/calibration-cpu.json");
  const json& rows = doc.at("idle_by_context").at("rows");
  const auto facts =
      testing::describe(testing::captured_header(doc.at("models").at("tiny-qwen35")), "q.gguf");
  ASSERT_TRUE(facts);
  const auto at_load = [&](const json& row) {
    PlanConfig config = testing::report_tuned_config();  // 3 slots, one pool, n-max 4
    config.ctx_total = row.at("ctx").get<std::uint64_t>();
    config.mtp = row.at("mtp").get<bool>();
    config.cache_ram_bytes = 0;
    const auto plan = make_plan(*facts, config, {});
    EXPECT_TRUE(plan);
    return static_cast<double>(uncalibrated_memory(*plan, PlanBackend::cpu).at_load);
  };
  int pairs = 0;
  for (const json& small : rows) {
    for (const json& large : rows) {
      if (small.at("mtp") != large.at("mtp") || small.at("ctx") >= large.at("ctx")) {
        continue;
      }
      const double measured = static_cast<double>(large.at("rss_kib").get<std::uint64_t>() -
                                                  small.at("rss_kib").get<std::uint64_t>()) *
                              1024.0;
      EXPECT_NEAR(at_load(large) - at_load(small), measured, 0.01 * measured)
          << small.at("ctx") << " → " << large.at("ctx") << " cells, MTP " << small.at("mtp");
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 4);
}

}  // namespace
}  // namespace gb10tune::plan
