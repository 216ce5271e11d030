// The process in service on CUDA: every run captured on the H200 (CUDA build 3f545be) with its
// memory after traffic, against the plan made for its model and flags. One prompt longer than a
// micro-batch on every slot at once (heldout-cuda.json, validation.json,
// offload-validation-cuda.json, traffic-cuda.json), and four soaks of 24 rounds of 1-3000 token
// prompts on 1 to all slots (traffic-cuda.json's soak-*), dense and MoE, full and partial offload.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gb10tune/plan/device_plan.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "support/captured_header.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

double traffic_mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / testing::kBytesPerMiB;
}

// One captured process after traffic and its plan, in MiB.
struct ServedRun {
  std::string name;
  json run;
  double gpu = 0;   // NVML per process
  double host = 0;  // VmRSS
  double gpu_plan = 0;
  double host_plan = 0;
  double total() const { return gpu + host; }
  double plan_total() const { return gpu_plan + host_plan; }
};

// The CUDA runs of every fixture that measured the process after traffic.
std::vector<ServedRun> served_runs() {
  std::vector<ServedRun> out;
  for (const char* fixture : {"heldout-cuda.json", "validation.json",
                              "offload-validation-cuda.json", "traffic-cuda.json"}) {
    const auto runs = testing::plan_captured_runs(
        testing::fixture_json(std::string("llama-server/memory/") + fixture),
        [](const json& run, const model::ModelFacts&) {
          return run.contains("after_traffic") && !run.at("nvml_mib").is_null();
        });
    for (const testing::CapturedPlan& r : runs) {
      const json& after = r.run.at("after_traffic");
      out.push_back({r.run.at("name").get<std::string>(), r.run, after.at("nvml_mib").get<double>(),
                     after.at("proc_kib").at("VmRSS").get<double>() / 1024,
                     traffic_mib(r.plan.devices->gpus.at(0).total_bytes),
                     traffic_mib(r.plan.devices->host.total_bytes)});
    }
  }
  return out;
}

// Never above the plan, on either side: the GPU (NVML) and the host (RSS) each stay inside
// their part. Before the runtime figures followed the soaks, qwen3 at -ngl 1 was 37 MiB over
// on the GPU and 22 MiB over on the host.
TEST(TrafficCuda, EachSideOfTheProcessStaysInsideItsPlanAfterTraffic) {
  int checked = 0;
  for (const ServedRun& r : served_runs()) {
    SCOPED_TRACE(r.name);
    EXPECT_LE(r.gpu, r.gpu_plan);
    EXPECT_LE(r.host, r.host_plan);
    ++checked;
  }
  EXPECT_EQ(checked, 19);
}

// Within 5% of the plan for every process whose plan reaches 2.75 GiB. Below that the
// runtime's growth in service is a larger share than 5% can hold: what one prompt per slot
// adds (+120..+174 MiB on the host, +108..+184 on the GPU) is up to 166 MiB below the envelope
// that sustained traffic reaches (+242 host, +184 GPU). That gap is the bound for all of them.
TEST(TrafficCuda, ThePlanHoldsTheProcessWithinFivePercentFromTwoAndThreeQuarterGiB) {
  int close = 0;
  for (const ServedRun& r : served_runs()) {
    SCOPED_TRACE(r.name + ": measured " + std::to_string(r.total()) + " MiB, planned " +
                 std::to_string(r.plan_total()));
    if (r.plan_total() >= 2.75 * 1024) {
      EXPECT_GE(r.total(), 0.95 * r.plan_total());
      ++close;
    }
    EXPECT_LE(r.plan_total() - r.total(), 170.0);
  }
  EXPECT_EQ(close, 10);
}

// A prompt per slot is a point on the way, not the process in service: over 24 rounds of mixed
// lengths and slot counts the heap keeps growing as cuBLAS meets new product shapes (the CUDA
// driver loads each kernel on first use), by 54-122 MiB after the first round, and flattens
// inside the plan: the last 8 rounds add under 8 MiB. The GPU side is set by the first round.
TEST(TrafficCuda, SustainedTrafficGrowsTheHostPastOnePromptAndFlattensInsideThePlan) {
  int checked = 0;
  for (const ServedRun& r : served_runs()) {
    if (!r.run.contains("soak")) {
      continue;
    }
    SCOPED_TRACE(r.name);
    const json& rounds = r.run.at("soak");
    ASSERT_EQ(rounds.size(), 24U);
    const auto rss = [&](std::size_t i) {
      return rounds.at(i).at("proc_kib").at("VmRSS").get<double>() / 1024;
    };
    EXPECT_GT(rss(23) - rss(0), 50.0);
    EXPECT_LT(rss(23) - rss(15), 8.0);
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      EXPECT_LE(rss(i), r.host_plan);
      EXPECT_EQ(rounds.at(i).at("nvml_mib").get<double>(),
                rounds.at(0).at("nvml_mib").get<double>());
      EXPECT_EQ(rounds.at(i).at("ok").get<int>(),
                static_cast<int>(rounds.at(i).at("prompts").size()));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

}  // namespace
}  // namespace gb10tune::plan
