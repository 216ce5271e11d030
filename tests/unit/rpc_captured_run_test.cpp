// The plan per node against a real two-worker run (fixtures/rpc/two-workers-3f545be.json,
// written by fixtures/rpc/capture_rpc_run.py): two CPU ggml-rpc-server processes and a CPU
// llama-server head of llama.cpp 3f545be on one machine, a random-weight llama of 8 blocks
// (fixtures/rpc/write_rpc_llama.py). What each process held was read from the head's buffer
// lines (-lv 4), from each worker's own allocations (GGML_RPC_DEBUG=1 logs every
// alloc_buffer), and from each process's VmRSS.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/rpc/node_log.hpp"
#include "gb10tune/rpc/node_plan.hpp"
#include "support/captured_header.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;

json captured_rpc_run() {
  std::ifstream in(testing::fixture("rpc/two-workers-3f545be.json"));
  return json::parse(in);
}

// The plan as gb10tune computes it now, from the captured model header, flags and workers.
struct RpcReplanned {
  model::ModelFacts model;
  plan::PlanConfig config;
  plan::MemoryPlan plan;
  rpc::NodePlan nodes;
};

RpcReplanned rpc_replan(const json& run) {
  RpcReplanned r;
  auto facts = testing::describe(testing::captured_header(run.at("model")), "rpc-llama.gguf");
  EXPECT_TRUE(facts) << facts.error().message;
  r.model = *facts;
  const json& c = run.at("config");
  r.config.ctx_total = c.at("ctx_total");
  r.config.slots = c.at("slots");
  r.config.kv_unified = c.at("kv_unified");
  r.config.cache_k = *plan::parse_cache_type(c.at("cache_type_k").get<std::string>());
  r.config.cache_v = *plan::parse_cache_type(c.at("cache_type_v").get<std::string>());
  r.config.flash_attention = c.at("flash_attention");
  r.config.ubatch = c.at("ubatch");
  r.config.batch = c.at("batch");
  r.config.mtp = c.at("mtp");
  r.config.cache_ram_bytes = c.at("cache_ram_bytes");
  r.config.overhead_bytes = c.at("overhead_bytes");
  r.config.backend = plan::PlanBackend::cpu;
  const json& argv = run.at("head_argv");
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-ngl") {
      r.config.gpu_layers = static_cast<std::uint32_t>(std::stoul(argv[i + 1].get<std::string>()));
    }
  }
  auto plan = plan::make_plan(r.model, r.config, plan::PlanBudget{});
  EXPECT_TRUE(plan) << plan.error().message;
  r.plan = *plan;
  rpc::NodeBudgets budgets;
  for (const json& w : run.at("plan").at("workers")) {
    rpc::WorkerInfo info;
    info.endpoint = *rpc::parse_endpoint(w.at("endpoint").get<std::string>());
    info.version = rpc::kKnownVersion;
    for (const json& d : w.at("devices")) {
      info.devices.push_back(rpc::DeviceMemory{d.at("free_bytes"), d.at("total_bytes")});
    }
    budgets.workers.push_back(info);
  }
  const json& head = run.at("plan").at("nodes").back();
  budgets.head_mem_available = head.at("free_bytes").get<std::uint64_t>();
  budgets.head_reserve_bytes = head.at("reserve_bytes");
  r.nodes = rpc::plan_nodes(r.model, r.config, r.plan, budgets);
  return r;
}

double rpc_percent(std::uint64_t planned, std::uint64_t measured) {
  return (static_cast<double>(measured) - static_cast<double>(planned)) /
         static_cast<double>(planned) * 100.0;
}

TEST(RpcCapturedRun, TheRunServedAChatCompletionAndLeftNothingRunning) {
  const json run = captured_rpc_run();
  EXPECT_TRUE(run.at("ok").get<bool>());
  EXPECT_TRUE(run.at("left_running").empty());
  EXPECT_EQ(run.at("chat_completion").at("status"), 200);
  EXPECT_EQ(run.at("chat_completion").at("completion_tokens").get<int>(), 16);
  EXPECT_FALSE(run.at("chat_completion").at("content").get<std::string>().empty());
  EXPECT_EQ(run.at("steps").at("verify").at("exit"), 0);
  EXPECT_EQ(run.at("steps").at("stop").at("exit"), 0);
}

// The layers go where llama.cpp put them: the head's model buffer per worker is the sum of its
// blocks (5 and 3 of 8, the output layer with the second), to the log's 0.01 MiB.
TEST(RpcCapturedRun, LayersAreSplitAsLlamaCppSplitThem) {
  const json run = captured_rpc_run();
  const RpcReplanned r = rpc_replan(run);
  ASSERT_EQ(r.nodes.nodes.size(), 3u);
  EXPECT_EQ(r.nodes.nodes[0].layers, (std::vector<std::uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(r.nodes.nodes[1].layers, (std::vector<std::uint32_t>{5, 6, 7}));
  EXPECT_TRUE(r.nodes.nodes[1].output_layer);
  EXPECT_TRUE(r.nodes.nodes[2].layers.empty());
  std::string log;
  for (const json& line : run.at("head").at("buffer_lines")) {
    log += line.get<std::string>() + "\n";
  }
  const auto logged = rpc::node_buffers_from_log(log, r.nodes);
  ASSERT_TRUE(logged);
  constexpr double kLogRounding = 0.005 * 1048576.0;  // the log prints MiB with 2 decimals
  for (std::size_t i = 0; i < 3; ++i) {
    const rpc::NodePart& node = r.nodes.nodes[i];
    EXPECT_NEAR(static_cast<double>((*logged)[i].model_bytes),
                static_cast<double>(node.weights_bytes), kLogRounding)
        << node.node;
    EXPECT_NEAR(static_cast<double>((*logged)[i].kv_bytes), static_cast<double>(node.cache_bytes),
                kLogRounding)
        << node.node;
    EXPECT_NEAR(static_cast<double>((*logged)[i].compute_bytes),
                static_cast<double>(node.compute_bytes), kLogRounding)
        << node.node;
  }
}

// Each node's plan against what its process held: the head's buffer lines for that node and
// the worker's own allocations within 5% (they are within 0.1%); the worker's RSS (its
// compute buffer is not all touched, the plan is an upper bound) within +5% and not below its
// weights and KV.
TEST(RpcCapturedRun, EachNodesPlanIsWithinFivePercentOfWhatItsProcessHeld) {
  const json run = captured_rpc_run();
  const RpcReplanned r = rpc_replan(run);
  std::string log;
  for (const json& line : run.at("head").at("buffer_lines")) {
    log += line.get<std::string>() + "\n";
  }
  const auto logged = rpc::node_buffers_from_log(log, r.nodes);
  ASSERT_TRUE(logged);
  for (std::size_t i = 0; i < 2; ++i) {
    const rpc::NodePart& node = r.nodes.nodes[i];
    const json& worker = run.at("workers")[i];
    ASSERT_EQ(worker.at("endpoint"), node.node);
    const auto allocated = worker.at("allocated_bytes").get<std::uint64_t>();
    EXPECT_LT(std::abs(rpc_percent(node.buffer_bytes, allocated)), 0.1) << node.node;
    EXPECT_LT(std::abs(rpc_percent(node.buffer_bytes, (*logged)[i].total())), 0.1) << node.node;
    const std::uint64_t rss = worker.at("rss_kib").get<std::uint64_t>() * 1024;
    EXPECT_LT(rpc_percent(node.load_bytes, rss), 5.0) << node.node;
    EXPECT_GT(rss, node.weights_bytes + node.cache_bytes) << node.node;
  }
  const rpc::NodePart& head = r.nodes.nodes[2];
  EXPECT_LT(std::abs(rpc_percent(head.buffer_bytes, (*logged)[2].total())), 1.0);
  const std::uint64_t head_rss = run.at("head").at("rss_kib").get<std::uint64_t>() * 1024;
  EXPECT_LT(rpc_percent(head.load_bytes, head_rss), 5.0);
  // Nothing is planned twice or left out: the nodes' weights are the model's.
  EXPECT_EQ(r.nodes.nodes[0].weights_bytes + r.nodes.nodes[1].weights_bytes + head.weights_bytes,
            r.plan.weights_bytes);
}

// What the gb10tune of the capture planned is what this one plans: the same layers, and buffers
// within a KiB (the compute buffer is now replayed with the allocator's 32-byte alignment:
// +124 bytes on each worker, whose real buffers were 96 and 128 bytes above the old plan's).
TEST(RpcCapturedRun, TheRecordedPlanIsReproduced) {
  const json run = captured_rpc_run();
  const RpcReplanned r = rpc_replan(run);
  const json& recorded = run.at("plan").at("nodes");
  ASSERT_EQ(recorded.size(), r.nodes.nodes.size());
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    EXPECT_EQ(recorded[i].at("node"), r.nodes.nodes[i].node);
    EXPECT_EQ(recorded[i].at("layers").get<std::vector<std::uint32_t>>(), r.nodes.nodes[i].layers);
    EXPECT_NEAR(static_cast<double>(recorded[i].at("buffer_bytes").get<std::uint64_t>()),
                static_cast<double>(r.nodes.nodes[i].buffer_bytes), 1024.0);
  }
}

}  // namespace
}  // namespace gb10tune
