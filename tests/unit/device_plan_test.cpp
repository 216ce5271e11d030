// Layer placement over discrete GPUs, as llama_model_base::load_tensors does it (llama.cpp
// 3f545be), and the argument and device parsing that feeds it.
#include "gb10tune/plan/device_plan.hpp"

#include <gtest/gtest.h>

namespace gb10tune::plan {
namespace {

std::vector<GpuBudget> gpus(std::vector<std::optional<std::uint64_t>> free) {
  std::vector<GpuBudget> out;
  for (std::size_t i = 0; i < free.size(); ++i) {
    out.push_back({"CUDA" + std::to_string(i), "GPU", free[i], kDefaultGpuReserveBytes});
  }
  return out;
}

std::vector<int> range(int from, int to, int value) {  // [from, to)
  return std::vector<int>(static_cast<std::size_t>(to - from), value);
}

std::vector<int> concat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(AssignLayers, AllLayersAndTheOutputGoToOneGpu) {
  const auto all = assign_layers(16, std::nullopt, {}, gpus({1}));
  EXPECT_EQ(all.device_of, range(0, 17, 0));
  EXPECT_EQ(assign_layers(16, 99, {}, gpus({1})).device_of, range(0, 17, 0));
}

// -ngl N offloads the last N of the n_layer_all + 1 layers: the first blocks stay on the CPU,
// and -ngl 1 offloads the output layer alone ("offloaded 1/17 layers to GPU").
TEST(AssignLayers, FewerGpuLayersKeepTheFirstBlocksOnTheCpu) {
  EXPECT_EQ(assign_layers(16, 9, {}, gpus({1})).device_of,
            concat(range(0, 8, -1), range(8, 17, 0)));
  EXPECT_EQ(assign_layers(16, 1, {}, gpus({1})).device_of, concat(range(0, 16, -1), {0}));
  EXPECT_EQ(assign_layers(16, 0, {}, gpus({1})).device_of, range(0, 17, -1));
  EXPECT_EQ(assign_layers(16, 9, {}, {}).device_of, range(0, 17, -1));  // no GPU
}

// --tensor-split 3,1 over 41 layers: fractions 0.75 / 1.0; layer il goes to the first device
// whose fraction exceeds il / 41.
TEST(AssignLayers, TensorSplitGivesEachGpuItsShareInOrder) {
  EXPECT_EQ(assign_layers(40, std::nullopt, {3, 1}, gpus({1, 1})).device_of,
            concat(range(0, 31, 0), range(31, 41, 1)));
  // Partial offload splits the offloaded layers only.
  EXPECT_EQ(assign_layers(40, 21, {1, 1}, gpus({1, 1})).device_of,
            concat(concat(range(0, 20, -1), range(20, 31, 0)), range(31, 41, 1)));
  // All zero: as if unset, by free memory.
  EXPECT_EQ(assign_layers(40, std::nullopt, {0, 0}, gpus({300, 100})).device_of,
            concat(range(0, 31, 0), range(31, 41, 1)));
}

TEST(AssignLayers, WithoutATensorSplitFreeMemoryDecides) {
  EXPECT_EQ(assign_layers(40, std::nullopt, {}, gpus({100, 300})).device_of,
            concat(range(0, 11, 0), range(11, 41, 1)));  // il / 41 < 0.25: 0-10
  // Unknown free memory: equal shares.
  EXPECT_EQ(assign_layers(40, std::nullopt, {}, gpus({std::nullopt, 300})).device_of,
            concat(range(0, 21, 0), range(21, 41, 1)));
}

TEST(ParsePlacement, ReadsTensorSplitAndDevicesInEverySpelling) {
  const auto a = parse_placement({"-ts", "3,1", "-dev", "CUDA0,CUDA1"});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->tensor_split, (std::vector<float>{3, 1}));
  EXPECT_EQ(a->devices, (std::vector<std::string>{"CUDA0", "CUDA1"}));
  const auto b = parse_placement({"--tensor-split=1/2/1", "--device", "CUDA1"});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->tensor_split, (std::vector<float>{1, 2, 1}));
  EXPECT_EQ(b->devices, (std::vector<std::string>{"CUDA1"}));
  EXPECT_TRUE(parse_placement({"-c", "4096"})->tensor_split.empty());
  const auto bad = parse_placement({"-ts", "3,x"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::usage);
  EXPECT_NE(bad.error().message.find("'x'"), std::string::npos);
}

gpu::GpuDevice device(int index, std::string bus, bool integrated) {
  gpu::GpuDevice d;
  d.index = index;
  d.name = integrated ? "NVIDIA GB10" : "NVIDIA H200";
  d.integrated = integrated;
  d.pci_bus_id = std::move(bus);
  return d;
}

TEST(GpuBudgets, DiscreteGpusTakeNvmlFreeMemoryByBusIdAndGb10KeepsOnePool) {
  gpu::GpuReport report;
  report.status = gpu::GpuStatus::available;
  report.devices = {device(0, "0000:19:00.0", false), device(1, "0000:3b:00.0", false)};
  gpu::NvmlReport nvml;
  // NVML enumerates in bus order too, but the match is by bus id, not by index.
  nvml.memory = {{0, "0000:3b:00.0", 150, 120}, {1, "0000:19:00.0", 150, 140}};
  const auto both = gpu_budgets(report, nvml, {}, 7);
  ASSERT_TRUE(both);
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].name, "CUDA0");
  EXPECT_EQ((*both)[0].free_bytes, 140u);
  EXPECT_EQ((*both)[1].free_bytes, 120u);
  EXPECT_EQ((*both)[1].reserve_bytes, 7u);
  const auto one = gpu_budgets(report, nvml, {"CUDA1"}, 7);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].name, "CUDA1");
  const auto wrong = gpu_budgets(report, nvml, {"CUDA5"}, 7);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, ExitCode::usage);
  // No NVML figure: unknown, not zero.
  EXPECT_FALSE((*gpu_budgets(report, {}, {}, 7))[0].free_bytes);

  gpu::GpuReport gb10;
  gb10.status = gpu::GpuStatus::available;
  gb10.devices = {device(0, "000f:01:00.0", true)};
  EXPECT_TRUE(gpu_budgets(gb10, nvml, {}, 7)->empty());
}

}  // namespace
}  // namespace gb10tune::plan
