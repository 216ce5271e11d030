// The process in service on CUDA: every run captured on the H200 (CUDA build 3f545be) with its
// memory after traffic, against the plan made for its model and flags. One prompt longer than a
// micro-batch on every slot at once (heldout-cuda.json, validation.json,
// offload-validation-cuda.json, traffic-cuda.json) and soaks of 24-40 rounds of 1-3000 token
// prompts on 1 to all slots (soak-*), dense and MoE, full and partial offload, with and without
// flash attention. traffic-heldout-cuda.json and traffic-heldout2-cuda.json were each captured
// after an envelope was committed (c6a4968, 3ebb8d0); runs of both went past it (below), and the
// envelope was revised with them.
#include <gtest/gtest.h>

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
  for (const char* fixture :
       {"heldout-cuda.json", "validation.json", "offload-validation-cuda.json", "traffic-cuda.json",
        "traffic-heldout-cuda.json", "traffic-heldout2-cuda.json", "traffic-heldout3-cuda.json"}) {
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
// on the GPU and 22 MiB over on the host. Held-out runs found two envelopes short since:
// c6a4968 (+250 MiB host; device +145, +190 with partial offload) missed a MoE at -ngl 1 -ub
// 1024 by 55 MiB on the GPU, heads of 80 without flash attention by 35 MiB on the host and a
// MoE soak on 4 slots by 16 MiB; 3ebb8d0 (a pool per 512 tokens by kind) missed two runs
// without flash attention on the GPU (+14, +57 MiB) and a MoE soak at -ub 1024 on the host (+9
// MiB, +291 of heap). The pool now follows the products (cuda_pool_in_service).
TEST(TrafficCuda, EachSideOfTheProcessStaysInsideItsPlanAfterTraffic) {
  int checked = 0;
  for (const ServedRun& r : served_runs()) {
    SCOPED_TRACE(r.name);
    EXPECT_LE(r.gpu, r.gpu_plan);
    EXPECT_LE(r.host, r.host_plan);
    ++checked;
  }
  EXPECT_EQ(checked, 37);
}

// How close: the in-service envelope is what sustained traffic reaches (the heap up to +291 MiB)
// and, without flash attention, what a slot filled to its last cell needs (the f16 scores), so a
// process after one prompt per slot lies below it. With flash attention every process is within
// 9% of its plan, within 6% from 2.75 GiB; without, within 11% (prompts of 2000-3000 tokens in
// slots of 4096-8192 cells).
TEST(TrafficCuda, HowFarBelowThePlanAProcessAfterTrafficLies) {
  int flash = 0;
  int without = 0;
  for (const ServedRun& r : served_runs()) {
    SCOPED_TRACE(r.name + ": measured " + std::to_string(r.total()) + " MiB, planned " +
                 std::to_string(r.plan_total()));
    if (r.run.at("config").at("fa").get<bool>()) {
      EXPECT_GE(r.total(), (r.plan_total() >= 2.75 * 1024 ? 0.94 : 0.91) * r.plan_total());
      ++flash;
    } else {
      EXPECT_GE(r.total(), 0.89 * r.plan_total());
      ++without;
    }
  }
  EXPECT_EQ(flash, 30);
  EXPECT_EQ(without, 7);
}

// A prompt per slot is a point on the way, not the process in service: over 24-40 rounds of
// mixed lengths and slot counts the heap keeps growing as cuBLAS meets new product shapes (the
// CUDA driver loads each kernel on first use), by 26-122 MiB after the first round, and
// flattens inside the plan: the last 8 rounds add under 8 MiB. With flash attention the GPU
// side is set by the first round (within 2 MiB: a llama at -ngl 2 gained 2 MiB later); without,
// it grows with the longest attention yet (the pool's f16 scores), inside the plan.
TEST(TrafficCuda, SustainedTrafficGrowsTheHostPastOnePromptAndFlattensInsideThePlan) {
  int checked = 0;
  for (const ServedRun& r : served_runs()) {
    if (!r.run.contains("soak")) {
      continue;
    }
    SCOPED_TRACE(r.name);
    const json& rounds = r.run.at("soak");
    ASSERT_GE(rounds.size(), 24U);
    const std::size_t last = rounds.size() - 1;
    const auto rss = [&](std::size_t i) {
      return rounds.at(i).at("proc_kib").at("VmRSS").get<double>() / 1024;
    };
    EXPECT_GT(rss(last) - rss(0), 20.0);
    const bool flash = r.run.at("config").at("fa").get<bool>();
    EXPECT_LT(rss(last) - rss(last - 8), 8.0);
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      EXPECT_LE(rss(i), r.host_plan);
      const double gpu = rounds.at(i).at("nvml_mib").get<double>();
      EXPECT_LE(gpu, r.gpu_plan);
      if (flash) {
        EXPECT_NEAR(gpu, rounds.at(0).at("nvml_mib").get<double>(), 4.0);
      } else if (i > 0) {
        EXPECT_GE(gpu, rounds.at(i - 1).at("nvml_mib").get<double>());
      }
      EXPECT_EQ(rounds.at(i).at("ok").get<int>(),
                static_cast<int>(rounds.at(i).at("prompts").size()));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 16);
}

}  // namespace
}  // namespace gb10tune::plan
