// The plan's rules on shapes they were not fitted to, after they were written
// (tests/fixtures/llama-server/memory/validation.json, capture_heldout.py --only v-…): a
// qwen3moe with 6 of 96 experts at n_embd 3072, a glm4moe with 8 of 128 experts and normalised
// router weights, a qwen3 whose heads are wider than n_embd with a q4_0 cache, a llama with a
// head size of 80 — on the CPU build here and a CUDA build on an H200.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gb10tune/plan/device_plan.hpp"
#include "gb10tune/plan/expected_memory.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "support/captured_header.hpp"
#include "support/test_context.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

double validation_mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / testing::kBytesPerMiB;
}

// One run and its plan (the H200's free memory as the budget on CUDA).
using ValidationRun = testing::CapturedPlan;

std::vector<ValidationRun> validation_plans() {
  return testing::plan_captured_runs(testing::fixture_json("llama-server/memory/validation.json"));
}

bool on_cuda(const ValidationRun& r) {
  return r.run.at("backend").get<std::string>() == "cuda";
}

// The compute buffers equal the server's to its two decimals, on both backends.
TEST(HeldoutValidation, ComputeBuffersEqualTheServers) {
  int checked = 0;
  for (const ValidationRun& r : validation_plans()) {
    SCOPED_TRACE(r.run.at("name").get<std::string>() + " (" +
                 r.run.at("backend").get<std::string>() +
                 "): " + r.run.at("args").get<std::string>());
    const json& compute = r.run.at("log").at("compute_mib");
    if (on_cuda(r)) {
      EXPECT_NEAR(validation_mib(r.plan.buffers.main.compute_device),
                  compute.at("CUDA0").get<double>(), 0.006);
      EXPECT_NEAR(validation_mib(r.plan.buffers.main.compute_host),
                  compute.at("CUDA_Host").get<double>(), 0.006);
    } else {
      EXPECT_NEAR(validation_mib(r.plan.buffers.main.compute_host), compute.at("CPU").get<double>(),
                  0.006);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 16);
}

// After load the process holds the plan's figure at load: RSS within 1% on the CPU build; on
// CUDA the GPU part lies between that figure (cuBLAS not loaded yet) and the plan.
TEST(HeldoutValidation, AfterLoadTheProcessHoldsThePlansFigureAtLoad) {
  for (const ValidationRun& r : validation_plans()) {
    SCOPED_TRACE(r.run.at("name").get<std::string>() + " (" +
                 r.run.at("backend").get<std::string>() + ")");
    if (on_cuda(r)) {
      const DevicePart& gpu = r.plan.devices->gpus.at(0);
      const double nvml = r.run.at("nvml_mib").get<double>();
      EXPECT_LE(nvml, validation_mib(gpu.total_bytes));
      EXPECT_GE(nvml, 0.99 * validation_mib(gpu.total_bytes - gpu.service_bytes));
      continue;
    }
    const double rss = r.run.at("proc_kib").at("VmRSS").get<double>() / 1024;
    const double at_load = validation_mib(uncalibrated_memory(r.plan, PlanBackend::cpu).at_load);
    EXPECT_NEAR(rss, at_load, 0.01 * at_load);
  }
}

// After a prompt longer than one micro-batch on every slot at once: never above the plan, and
// within 5% of it.
TEST(HeldoutValidation, AfterTrafficTheProcessStaysInsideThePlanAndWithinFivePercent) {
  int checked = 0;
  for (const ValidationRun& r : validation_plans()) {
    if (!r.run.contains("after_traffic")) {
      continue;
    }
    SCOPED_TRACE(r.run.at("name").get<std::string>() + " (" +
                 r.run.at("backend").get<std::string>() + ")");
    const json& after = r.run.at("after_traffic");
    for (const json& status : r.run.at("traffic").at("statuses")) {
      EXPECT_EQ(status, 200);
    }
    const double peak = after.at("proc_kib").at("VmHWM").get<double>() / 1024 +
                        (on_cuda(r) ? after.at("nvml_mib").get<double>() : 0.0);
    const double now = after.at("proc_kib").at("VmRSS").get<double>() / 1024 +
                       (on_cuda(r) ? after.at("nvml_mib").get<double>() : 0.0);
    const double planned = validation_mib(r.plan.total_bytes);
    // VmHWM of a CUDA server counts the mapped file during the upload (the pages are unmapped
    // afterwards): on CUDA the check is the process now.
    EXPECT_LE(on_cuda(r) ? now : peak, planned);
    EXPECT_GE(now, 0.95 * planned) << "measured " << now << " MiB of " << planned;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

}  // namespace
}  // namespace gb10tune::plan
