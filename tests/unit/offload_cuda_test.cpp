// The plan under partial offload against a CUDA llama-server (H200, llama.cpp 3f545be): the
// partial-offload runs of heldout-cuda.json and the runs of offload-trace-cuda.json, captured
// with ggml-alloc.c's allocation trace (capture_heldout.py's TRACE list). -ngl 0 to 8 of an
// 8-block llama at n_embd 4096 (micro-batch 256/512/1024, flash attention on and off) and -ngl 2
// of a qwen3moe with 4 of 64 experts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gb10tune/plan/device_plan.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "support/captured_header.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

double offload_mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / testing::kBytesPerMiB;
}

// -ngl below the blocks + the output layer: some blocks stay in host memory. The runs after
// traffic are left out (measured later than load).
bool partial_offload(const json& run, const model::ModelFacts& model) {
  const json& config = run.at("config");
  return config.contains("ngl") && config.at("ngl").get<std::uint32_t>() <= model.block_count &&
         !run.contains("after_traffic");
}

std::vector<testing::CapturedPlan> offload_runs() {
  auto out = testing::plan_captured_runs(
      testing::fixture_json("llama-server/memory/heldout-cuda.json"), partial_offload);
  for (auto& traced : testing::plan_captured_runs(
           testing::fixture_json("llama-server/memory/offload-trace-cuda.json"), partial_offload)) {
    out.push_back(std::move(traced));
  }
  return out;
}

// Within 4 MiB or 2% of `logged`, the bar for a compute buffer.
void expect_within_bar(double planned, double logged, const char* what) {
  EXPECT_LE(std::abs(planned - logged), std::max(4.0, 0.02 * logged))
      << what << ": planned " << planned << " MiB, logged " << logged;
}

// CUDA0's compute buffer (the CPU layers' weights and KV caches copied split by split, the
// inputs copied where a split first reads them) and CUDA_Host's equal the server's: to its two
// decimals, well inside the 4 MiB / 2%.
TEST(OffloadCuda, ComputeBuffersOfPartialOffloadEqualTheServers) {
  int checked = 0;
  for (const testing::CapturedPlan& r : offload_runs()) {
    SCOPED_TRACE(r.run.at("name").get<std::string>() + ": " + r.run.at("args").get<std::string>());
    const json& compute = r.run.at("log").at("compute_mib");
    const double device = offload_mib(r.plan.buffers.main.compute_device);
    const double host = offload_mib(r.plan.buffers.main.compute_host);
    expect_within_bar(device, compute.at("CUDA0").get<double>(), "CUDA0");
    expect_within_bar(host, compute.at("CUDA_Host").get<double>(), "CUDA_Host");
    EXPECT_NEAR(device, compute.at("CUDA0").get<double>(), 0.006);
    EXPECT_NEAR(host, compute.at("CUDA_Host").get<double>(), 0.006);
    ++checked;
  }
  EXPECT_EQ(checked, 13);  // 6 of heldout-cuda.json, 7 traced
}

// Where the trace was replayed allocation by allocation, the plan's CUDA0 buffer is that
// replay's high-water mark to the byte: the same copies and frees in the same order.
TEST(OffloadCuda, DeviceBufferIsTheTracedHighWaterToTheByte) {
  int checked = 0;
  for (const testing::CapturedPlan& r : offload_runs()) {
    if (!r.run.contains("allocation_trace")) {
      continue;
    }
    SCOPED_TRACE(r.run.at("name").get<std::string>());
    const json& trace = r.run.at("allocation_trace");
    EXPECT_EQ(r.plan.buffers.main.compute_device, trace.at("CUDA0_bytes").get<std::uint64_t>());
    ++checked;
  }
  EXPECT_EQ(checked, 7);
}

// The GPU part after load (weights, caches, compute, the CUDA runtime before its first prompts)
// within 2% of NVML's per-process figure; with -ngl 0 the GPU still holds the CUDA runtime and
// the compute buffer of the offloaded ops (674 MiB measured).
TEST(OffloadCuda, GpuPartAtLoadWithinTwoPercentOfNvml) {
  int checked = 0;
  for (const testing::CapturedPlan& r : offload_runs()) {
    SCOPED_TRACE(r.run.at("name").get<std::string>());
    ASSERT_TRUE(r.plan.devices.has_value());
    ASSERT_FALSE(r.plan.devices->gpus.empty());
    const DevicePart& gpu = r.plan.devices->gpus.front();
    const double at_load = offload_mib(gpu.total_bytes - gpu.service_bytes);
    const double nvml = r.run.at("nvml_mib").get<double>();
    EXPECT_LE(std::abs(at_load - nvml), 0.02 * nvml) << "planned at load " << at_load << " MiB";
    ++checked;
  }
  EXPECT_EQ(checked, 13);
}

}  // namespace
}  // namespace gb10tune::plan
