// The plan per node when the head's GPU is discrete: its part (layers, caches, compute buffer,
// CUDA context) is judged against that GPU's own free memory, apart from the head's
// MemAvailable. The GPU part is checked against what a real CUDA llama-server put on its GPU
// (tests/fixtures/llama-server/memory/heldout-cuda.json, captured on an H200): the head's
// buffers per layer are the same with or without workers, so a head alone is the known answer.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/render/node_plan_render.hpp"
#include "gb10tune/rpc/node_plan.hpp"
#include "support/captured_header.hpp"
#include "support/test_context.hpp"
#include "support/units.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;

double head_mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / testing::kBytesPerMiB;
}

// The H200 of the captures as the head's one discrete GPU.
rpc::NodeBudgets h200_head(std::uint64_t gpu_free_bytes) {
  rpc::NodeBudgets budgets;
  budgets.head_mem_available = 120ull << 30;
  budgets.head_devices.push_back(
      {"CUDA0", "NVIDIA H200", gpu_free_bytes, plan::kDefaultGpuReserveBytes});
  budgets.head_gpus_discrete = true;
  return budgets;
}

// The plan as launch makes it over RPC: the one-machine plan sizes the buffers without a GPU
// budget (take_head_budget moves it to the node plan).
struct HeadReplanned {
  model::ModelFacts model;
  plan::PlanConfig config;
  plan::MemoryPlan plan;
};

std::optional<HeadReplanned> replan(const json& run, const model::ModelFacts& model) {
  HeadReplanned r{model, testing::captured_plan_config(run.at("config")), {}};
  r.config.overhead_bytes = plan::kDefaultOverheadBytes;
  plan::PlanBudget budget;
  budget.mem_available = 120ull << 30;
  auto made = plan::make_plan(r.model, r.config, budget);
  EXPECT_TRUE(made) << run.at("name") << ": " << made.error().message;
  if (!made) {
    return std::nullopt;
  }
  r.plan = *made;
  return r;
}

// The sum of the server's log lines "<buffer> KV buffer size = X MiB" for `buffer` (a partial
// offload prints one for the CPU and one for CUDA0).
double logged_kv_mib(const json& run, const std::string& buffer) {
  double sum = 0;
  const std::string key = " " + buffer + " KV buffer size = ";
  for (const json& line : run.at("lines")) {
    const std::string text = line.get<std::string>();
    if (const auto at = text.find(key); at != std::string::npos) {
      sum += std::stod(text.substr(at + key.size()));
    }
  }
  return sum;
}

// The layers the server kept on the CPU: "offloaded X/Y layers to GPU" (Y counts the output
// layer, which -ngl offloads first).
std::size_t logged_cpu_layers(const json& run) {
  const std::string key = "offloaded ";
  for (const json& line : run.at("lines")) {
    const std::string text = line.get<std::string>();
    if (const auto at = text.find(key);
        at != std::string::npos && text.find("layers to GPU") != std::string::npos) {
      const std::string figures = text.substr(at + key.size());
      const auto slash = figures.find('/');
      return std::stoul(figures.substr(slash + 1)) - std::stoul(figures.substr(0, slash));
    }
  }
  ADD_FAILURE() << "no 'offloaded X/Y layers to GPU' line";
  return 0;
}

// Every captured run on the H200 with the default environment: the head GPU's weights and KV
// equal the server's CUDA0 buffers to the log's two decimals, its compute buffer too when every
// layer is offloaded, and what NVML saw the process hold on the GPU lies between the part's
// figure at load (less 6 MiB, the bound of the one-machine plan) and the whole part.
TEST(RpcDiscreteHead, TheHeadGpuPartMatchesWhatTheServerPutOnItsGpu) {
  const json fixture = testing::fixture_json("llama-server/memory/heldout-cuda.json");
  const auto models = testing::captured_models(fixture.at("models"));
  constexpr double kLogRounding = 0.006;  // MiB: the log prints two decimals
  constexpr double kBelowLoadFigureMiB = 6.0;
  int checked = 0;
  for (const json& run : fixture.at("runs")) {
    if (run.contains("env") || !run.at("log").at("model_mib").contains("CUDA0")) {
      continue;  // LLAMA_ATTN_ROT_DISABLE (launch never sets it), or nothing on the GPU
    }
    SCOPED_TRACE(run.at("name").get<std::string>() + ": " + run.at("args").get<std::string>());
    const auto r = replan(run, models.at(run.at("model").get<std::string>()));
    ASSERT_TRUE(r);
    const rpc::NodePlan nodes =
        rpc::plan_nodes(r->model, r->config, r->plan, h200_head(143156ull << 20));
    ASSERT_EQ(nodes.nodes.size(), 1u);
    const rpc::NodePart& head = nodes.nodes[0];
    ASSERT_EQ(head.gpus.size(), 1u);
    const plan::DevicePart& gpu = head.gpus[0];
    const json& log = run.at("log");
    EXPECT_NEAR(head_mib(gpu.weights_bytes), log.at("model_mib").at("CUDA0").get<double>(),
                kLogRounding);
    EXPECT_NEAR(head_mib(gpu.cache_bytes), logged_kv_mib(run, "CUDA0"), kLogRounding);
    // With -ngl N the first layers stay on the head's CPU, with their KV in host memory.
    EXPECT_EQ(head.layers.size(), logged_cpu_layers(run));
    EXPECT_NEAR(head_mib(head.cache_bytes), logged_kv_mib(run, "CPU"), kLogRounding);
    if (!run.at("config").contains("ngl")) {
      EXPECT_NEAR(head_mib(gpu.compute_bytes), log.at("compute_mib").at("CUDA0").get<double>(),
                  kLogRounding);
    }
    const double nvml = run.at("nvml_mib").get<double>();
    EXPECT_LE(nvml, head_mib(gpu.total_bytes));
    EXPECT_GE(nvml, head_mib(gpu.total_bytes - gpu.service_bytes) - kBelowLoadFigureMiB);
    // The GPU's buffers are not the host's: the head's own part holds none of them.
    EXPECT_LT(head.weights_bytes + gpu.weights_bytes, r->plan.weights_bytes + (1ull << 20));
    EXPECT_TRUE(gpu.fits);
    EXPECT_TRUE(nodes.fits);
    ++checked;
  }
  EXPECT_EQ(checked, 38);  // 40 runs: one with nothing on the GPU, one with LLAMA_ATTN_ROT_DISABLE
}

// A discrete GPU too small for the layers it is given does not fit, whatever the head's
// MemAvailable: launch names the GPU and refuses. The same budgets as one pool (a GB10) fit.
TEST(RpcDiscreteHead, AGpuTooSmallForItsShareDoesNotFitWhateverMemAvailableSays) {
  const json fixture = testing::fixture_json("llama-server/memory/heldout-cuda.json");
  const auto models = testing::captured_models(fixture.at("models"));
  const json* m64 = nullptr;
  for (const json& run : fixture.at("runs")) {
    if (run.at("name") == "m64x4-ub512") {
      m64 = &run;
    }
  }
  ASSERT_NE(m64, nullptr);
  const auto r = replan(*m64, models.at("m64x4"));
  ASSERT_TRUE(r);
  // A CPU worker beside a 2 GiB GPU (1 GiB once the reserve is kept), layers split 1:1: the GPU
  // gets half the model (669 MiB) plus its KV, compute buffer and CUDA context.
  rpc::WorkerInfo worker;
  worker.endpoint = *rpc::parse_endpoint("127.0.0.1:50052");
  worker.version = rpc::kKnownVersion;
  worker.devices.push_back({64ull << 30, 64ull << 30});
  plan::PlanConfig config = r->config;
  config.tensor_split = {1, 1};
  rpc::NodeBudgets small = h200_head(2ull << 30);
  small.workers.push_back(worker);
  const rpc::NodePlan nodes = rpc::plan_nodes(r->model, config, r->plan, small);
  ASSERT_EQ(nodes.nodes.size(), 2u);
  const rpc::NodePart& head = nodes.nodes[1];
  ASSERT_EQ(head.gpus.size(), 1u);
  EXPECT_FALSE(head.gpus[0].layers.empty());
  EXPECT_EQ(head.gpus[0].available_bytes, 1ull << 30);
  EXPECT_GT(head.gpus[0].total_bytes, 1ull << 30);
  EXPECT_FALSE(head.gpus[0].fits);
  EXPECT_TRUE(*head.margin_bytes >= 0) << "the host part fits";
  EXPECT_FALSE(head.fits);
  EXPECT_FALSE(nodes.fits);
  EXPECT_EQ(nodes.first_short, "head CUDA0");
  const std::string refusal = render::rpc_refusal(nodes);
  EXPECT_NE(refusal.find("the head's CUDA0 needs"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("free 2048.00 − reserve 1024.00 MiB"), std::string::npos) << refusal;

  // As one pool (a GB10's integrated GPU, MemAvailable its free memory): the same layers fit.
  rpc::NodeBudgets pool = small;
  pool.head_gpus_discrete = false;
  pool.head_devices[0].free_bytes = pool.head_mem_available;
  const rpc::NodePlan pooled = rpc::plan_nodes(r->model, config, r->plan, pool);
  EXPECT_TRUE(pooled.nodes[1].gpus.empty());
  EXPECT_TRUE(pooled.fits);
}

}  // namespace
}  // namespace gb10tune
