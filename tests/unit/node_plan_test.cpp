// The plan per RPC node: llama.cpp's layer cut over RPC devices (the split tests of the old
// layer_split, now against plan::assign_layers, the one implementation), the head's buffer
// names, and the log reader.
#include "gb10tune/rpc/node_plan.hpp"

#include <gtest/gtest.h>

#include "gb10tune/rpc/node_log.hpp"

namespace gb10tune {
namespace {

std::vector<plan::GpuBudget> split_rpc_devices(const std::vector<std::uint64_t>& free) {
  std::vector<plan::GpuBudget> out;
  for (std::size_t i = 0; i < free.size(); ++i) {
    out.push_back(plan::GpuBudget{"RPC" + std::to_string(i), "w", free[i], 0});
  }
  return out;
}

std::vector<int> split_per_device(const plan::LayerAssignment& a, int devices) {
  std::vector<int> counts(static_cast<std::size_t>(devices), 0);
  for (std::size_t il = 0; il + 1 < a.device_of.size(); ++il) {
    ++counts[static_cast<std::size_t>(a.device_of[il])];
  }
  return counts;
}

TEST(RpcLayerSplit, EvenSharesSplitLikeLlamaCpp) {
  // 8 layers + output over 2 equal devices: points 0.5, 1.0; layer i at i/9.
  const auto a = plan::assign_layers(8, std::nullopt, {}, split_rpc_devices({1, 1}));
  EXPECT_EQ(a.device_of, (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(a.output_device(), 1);
}

TEST(RpcLayerSplit, FreeMemoryWeightsTheCut) {
  // 3:1 over 4 layers + output: points 0.75, 1.0; i/5 = 0, .2, .4, .6 → device 0; output .8 → 1.
  const auto a =
      plan::assign_layers(4, std::nullopt, {}, split_rpc_devices({90ull << 30, 30ull << 30}));
  EXPECT_EQ(split_per_device(a, 2), (std::vector<int>{4, 0}));
  EXPECT_EQ(a.output_device(), 1);
  // --tensor-split overrides free memory; all zero is the same as none.
  const auto ts = plan::assign_layers(4, std::nullopt, {1, 1}, split_rpc_devices({90ull << 30, 1}));
  EXPECT_EQ(split_per_device(ts, 2), (std::vector<int>{3, 1}));
  const auto zero = plan::assign_layers(5, std::nullopt, {0, 0, 0}, split_rpc_devices({0, 0, 0}));
  EXPECT_EQ(zero.device_of.size(), 6u);
}

TEST(RpcLayerSplit, FewerGpuLayersKeepTheFirstOnTheHeadCpu) {
  // -ngl 4 of 8 + 1: layers 0-4 stay on the CPU (-1), 5-7 and the output go to the devices.
  const auto a = plan::assign_layers(8, 4u, {}, split_rpc_devices({1, 1}));
  EXPECT_EQ(a.device_of, (std::vector<int>{-1, -1, -1, -1, -1, 0, 0, 1, 1}));
}

// llama.cpp names an RPC buffer type by the device's index on its worker and the worker's
// endpoint: the second worker's first device is "RPC0[127.0.0.1:50153]" (captured, 3f545be).
TEST(RpcNodePlan, NamesRpcBuffersByTheirWorker) {
  EXPECT_EQ(rpc::rpc_buffer_endpoint("RPC0[127.0.0.1:50052]"), "127.0.0.1:50052");
  EXPECT_EQ(rpc::rpc_buffer_endpoint("RPC12[[::1]:1]"), "[::1]:1");
  EXPECT_FALSE(rpc::rpc_buffer_endpoint("RPC3"));
  EXPECT_FALSE(rpc::rpc_buffer_endpoint("CPU_Mapped"));
  EXPECT_FALSE(rpc::rpc_buffer_endpoint("RPC[]"));
  EXPECT_FALSE(rpc::rpc_buffer_endpoint("RPCx[1]"));
  EXPECT_FALSE(rpc::rpc_buffer_endpoint("CUDA0"));
}

TEST(RpcNodePlan, ReadsBufferLinesPerNode) {
  rpc::NodePlan nodes;
  nodes.nodes.resize(3);
  nodes.nodes[0].node = "127.0.0.1:50052";
  nodes.nodes[0].devices = {"RPC0"};
  nodes.nodes[1].node = "127.0.0.1:50053";
  nodes.nodes[1].devices = {"RPC1"};
  nodes.nodes[2].node = "head";
  nodes.nodes[2].devices = {"CPU"};
  const std::string log =
      "load_tensors:   CPU_Mapped model buffer size =     2.50 MiB\n"
      "load_tensors: RPC0[127.0.0.1:50052] model buffer size =   100.00 MiB\n"
      "load_tensors: RPC0[127.0.0.1:50053] model buffer size =    60.00 MiB\n"
      "llama_context:        CPU  output buffer size =     0.12 MiB\n"
      "llama_kv_cache: RPC0[127.0.0.1:50052] KV buffer size =    10.00 MiB\n"
      "0.02.946.753 I llama_kv_cache: RPC0[127.0.0.1:50053] KV buffer size =     6.00 MiB\n"
      "sched_reserve: RPC0[127.0.0.1:50052] compute buffer size =     1.50 MiB\n"
      "sched_reserve:        CPU compute buffer size =     0.50 MiB\n";
  const auto buffers = rpc::node_buffers_from_log(log, nodes);
  ASSERT_TRUE(buffers);
  EXPECT_EQ((*buffers)[0].total(), (100ull << 20) + (10ull << 20) + (3ull << 19));
  EXPECT_EQ((*buffers)[1].model_bytes, 60ull << 20);
  EXPECT_EQ((*buffers)[1].kv_bytes, 6ull << 20);
  EXPECT_EQ((*buffers)[2].model_bytes, 5ull << 19);
  EXPECT_EQ((*buffers)[2].compute_bytes, 1ull << 19);
  EXPECT_EQ((*buffers)[2].output_bytes, 125829u);
  // No buffer line (default verbosity), or a device the plan does not know: nothing.
  EXPECT_FALSE(rpc::node_buffers_from_log("main: model loaded\n", nodes));
  EXPECT_FALSE(rpc::node_buffers_from_log(
      "load_tensors: RPC0[10.0.0.9:1] model buffer size = 1.00 MiB\n", nodes));
}

}  // namespace
}  // namespace gb10tune
