// The whole process right after load on CUDA, as launch and verify judge it (the plan at load:
// expected_memory.hpp), against every CUDA capture of the H200 (build 3f545be): NVML per
// process plus RSS, before any prompt. With blocks in host memory, offloaded tensors inside
// the CPU's mapped range stay resident beside their GPU copies (mapped_extra): the process
// plan used to leave them out while the device plan counted them, so launch printed +8.4% for
// a qwen3 at -ngl 2 whose parts each matched.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "gb10tune/plan/expected_memory.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "support/captured_header.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

TEST(ProcessAtLoadCuda, ThePlanAtLoadIsWithinFourPercentOfEveryCapturedProcess) {
  int checked = 0;
  int partial_with_mapped_pages = 0;
  for (const char* fixture :
       {"heldout-cuda.json", "offload-validation-cuda.json", "traffic-cuda.json",
        "traffic-heldout-cuda.json", "traffic-heldout2-cuda.json", "traffic-heldout3-cuda.json"}) {
    const auto runs = testing::plan_captured_runs(
        testing::fixture_json(std::string("llama-server/memory/") + fixture),
        [](const json& run, const model::ModelFacts&) { return !run.at("nvml_mib").is_null(); });
    for (const testing::CapturedPlan& r : runs) {
      SCOPED_TRACE(r.run.at("name").get<std::string>());
      const double measured = r.run.at("nvml_mib").get<double>() +
                              r.run.at("proc_kib").at("VmRSS").get<double>() / 1024;
      const double at_load =
          static_cast<double>(uncalibrated_memory(r.plan, PlanBackend::cuda).at_load) /
          testing::kBytesPerMiB;
      EXPECT_LE(std::abs(measured - at_load), 0.04 * at_load) << "planned at load " << at_load;
      partial_with_mapped_pages += r.plan.mapped_extra_bytes > 0;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 80);
  EXPECT_EQ(partial_with_mapped_pages, 27);
}

}  // namespace
}  // namespace gb10tune::plan
