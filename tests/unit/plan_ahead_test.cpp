// The plan before a download, below the CLI: the machine descriptions and the sysroot that
// stands for them, the what-fits table from launch's planner, and the decode ceiling.
#include <gtest/gtest.h>

#include "gb10tune/launch/target_machine.hpp"
#include "gb10tune/launch/what_fits.hpp"
#include "gb10tune/server/known_build.hpp"
#include "gb10tune/sys/cpuinfo.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::launch {
namespace {

TEST(TargetMachine, Gb10IsDescribedAsTheReportAndTheCaptureShowIt) {
  const TargetMachine m = gb10_machine();
  EXPECT_EQ(m.bandwidth_bytes_per_second, 237e9);
  EXPECT_EQ(m.backend, "cuda");
  const platform::Sysroot root = machine_sysroot(m);
  EXPECT_TRUE(sys::is_gb10_machine(root));
  EXPECT_EQ(sys::nvidia_gpu_count(root), 1u);  // its GPU, as the driver lists it
  const auto mem = sys::read_meminfo(root);
  ASSERT_TRUE(mem) << mem.error().message;
  EXPECT_EQ(mem->total_bytes, 118164064ull * 1024);  // 121.0 GB
  EXPECT_EQ(mem->available_bytes, 109876544ull * 1024);
  // The same MemAvailable and CPU as the captured GB10 the launch tests replay.
  const platform::Sysroot captured(testing::sysroot_fixture("gb10"));
  EXPECT_EQ(sys::read_meminfo(captured)->available_bytes, mem->available_bytes);
  const auto cpu = sys::read_cpuinfo(root);
  ASSERT_TRUE(cpu) << cpu.error().message;
  EXPECT_EQ(cpu->model, sys::read_cpuinfo(captured)->model);
  EXPECT_EQ(cpu->common_flags, sys::read_cpuinfo(captured)->common_flags);
}

TEST(TargetMachine, AJsonDescriptionIsReadAndCheckedFieldByField) {
  testing::TempDir dir;
  const auto good = dir.write("m.json", R"({"name": "my box", "memory_gb": 64,
      "available_gb": 60, "bandwidth_gbps": 90, "backend": "cpu", "reserve": "4G"})");
  const auto m = find_target_machine(good.string(), platform::Sysroot(), {});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->description, "my box");
  EXPECT_EQ(m->memory_bytes, 64'000'000'000u);
  EXPECT_EQ(m->available_bytes, 60'000'000'000u);
  EXPECT_EQ(m->bandwidth_bytes_per_second, 90e9);
  EXPECT_EQ(m->reserve, "4G");
  EXPECT_TRUE(sys::read_meminfo(machine_sysroot(*m)));
  EXPECT_EQ(sys::nvidia_gpu_count(machine_sysroot(*m)), 0u);
  // A GPU named in the description is listed where the driver lists it.
  const auto with_gpu = dir.write("gpu.json", R"({"memory_gb": 128, "gpu": "NVIDIA GB10"})");
  const auto gpu_machine = find_target_machine(with_gpu.string(), platform::Sysroot(), {});
  ASSERT_TRUE(gpu_machine) << gpu_machine.error().message;
  EXPECT_EQ(sys::nvidia_gpu_count(machine_sysroot(*gpu_machine)), 1u);
  EXPECT_TRUE(sys::is_gb10_machine(machine_sysroot(*gpu_machine)));
  const std::vector<std::pair<std::string, std::string>> bad{
      {R"({"memory_gb": 64, "colour": 1})", "unknown field 'colour'"},
      {R"({"available_gb": 6})", "field 'memory_gb' is missing"},
      {R"({"memory_gb": -1})", "'memory_gb' must be a number of GB above 0"},
      {R"({"memory_gb": 8, "available_gb": 9})", "'available_gb' is more than 'memory_gb'"},
      {R"({"memory_gb": 8, "backend": "rocm"})", "'backend' is 'rocm'; give cuda or cpu"},
      {R"({"memory_gb": 8, "reserve": "lots"})", "'reserve' must be a size"},
      {"[1, 2]", "it is not a JSON object"}};
  for (const auto& [text, why] : bad) {
    const auto file = dir.write("bad.json", text);
    const auto refused = find_target_machine(file.string(), platform::Sysroot(), {});
    ASSERT_FALSE(refused) << text;
    EXPECT_EQ(refused.error().code, ExitCode::usage);
    EXPECT_TRUE(testing::contains(refused.error().message, why)) << refused.error().message;
    EXPECT_TRUE(testing::contains(refused.error().message, file.string()));
  }
  const auto missing = find_target_machine("gb11", platform::Sysroot(), {});
  ASSERT_FALSE(missing);
  EXPECT_TRUE(testing::contains(missing.error().message, "not one of this, gb10, gb10x2"));
}

TEST(DecodeCeiling, IsTheBandwidthOverTheBytesOfAToken) {
  TargetMachine m = gb10_machine();
  const DecodeCeiling plain = decode_ceiling(16'800'000'000u, m, false);
  ASSERT_TRUE(plain.available);
  EXPECT_NEAR(plain.tps, 237.0 / 16.8, 1e-9);  // K12: ~14 t/s
  EXPECT_EQ(plain.mtp_high_tps, 0);
  const DecodeCeiling mtp = decode_ceiling(16'800'000'000u, m, true);
  EXPECT_NEAR(mtp.mtp_low_tps, plain.tps * 2.88, 1e-9);
  EXPECT_NEAR(mtp.mtp_high_tps, plain.tps * 3.70, 1e-9);
  m.bandwidth_bytes_per_second = 0;
  EXPECT_FALSE(decode_ceiling(16'800'000'000u, m, true).available);
}

TEST(TargetMachine, DiscreteGpusAreListedAsTheDriverAndNvmlListThem) {
  testing::TempDir dir;
  const auto file = dir.write("two.json", R"({"memory_gb": 64, "backend": "cuda", "gpus": [
      {"name": "NVIDIA GeForce RTX 4090", "memory_gb": 24, "bandwidth_gbps": 1008},
      {"name": "NVIDIA RTX A4000", "memory_gb": 16}]})");
  const auto m = find_target_machine(file.string(), platform::Sysroot(), {});
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->discrete_gpus.size(), 2u);
  EXPECT_TRUE(m->gpu.empty());
  EXPECT_EQ(m->bandwidth_bytes_per_second, 1008e9);  // the first GPU's, no machine figure
  EXPECT_EQ(sys::nvidia_gpu_count(machine_sysroot(*m)), 2u);
  EXPECT_FALSE(sys::is_gb10_machine(machine_sysroot(*m)));
  DescribedGpuBackend gpus(m->discrete_gpus);
  const gpu::GpuReport devices = gpus.query_devices();
  ASSERT_EQ(devices.status, gpu::GpuStatus::available);
  ASSERT_EQ(devices.devices.size(), 2u);
  EXPECT_FALSE(devices.devices[1].integrated);
  EXPECT_EQ(devices.devices[1].pci_bus_id, "0000:02:00.0");
  const gpu::NvmlReport nvml = gpus.query_nvml();
  ASSERT_EQ(nvml.memory.size(), 2u);
  EXPECT_EQ(nvml.memory[1].pci_bus_id, "0000:02:00.0");
  EXPECT_EQ(nvml.memory[1].free_bytes, 16'000'000'000u);
  // An integrated GPU in the list is the machine's one pool, as "gpu" names it.
  const auto one = dir.write("one.json", R"({"memory_gb": 128,
      "gpus": [{"name": "NVIDIA GB10", "integrated": true}]})");
  const auto pool = find_target_machine(one.string(), platform::Sysroot(), {});
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_EQ(pool->gpu, "NVIDIA GB10");
  EXPECT_TRUE(pool->discrete_gpus.empty());
}

TEST(TargetMachine, Gb10x2HasOneWorkerAnsweringAsAGb10) {
  const auto pair = find_target_machine("gb10x2", platform::Sysroot(), {});
  ASSERT_TRUE(pair) << pair.error().message;
  EXPECT_TRUE(described_workers(gb10_machine()).empty());
  const auto workers = described_workers(*pair);
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].endpoint.to_string(), "192.168.100.2:50052");
  EXPECT_EQ(workers[0].version.to_string(), rpc::kKnownVersion.to_string());
  ASSERT_EQ(workers[0].devices.size(), 1u);
  EXPECT_EQ(workers[0].devices[0].free_bytes, gb10_machine().available_bytes);
  EXPECT_EQ(workers[0].devices[0].total_bytes, gb10_machine().memory_bytes);
}

// Four blocks of 1, 2, 3 and 4 GB and a 2 GB output layer; the worker holds blocks 0-1, the
// head 2-3 and the output: 3 and 9 of the 12 GB, so a token's 6 GB read splits 1.5 + 4.5.
TEST(DecodeCeiling, OverNodesSumsEachMachinesShareOfTheRead) {
  model::ModelFacts model;
  model.layer_weight_bytes = {1'000'000'000, 2'000'000'000, 3'000'000'000, 4'000'000'000};
  model.output_weight_bytes = 2'000'000'000;
  model.bytes_read_per_token = 6'000'000'000;
  rpc::NodePlan nodes;
  nodes.nodes.resize(2);
  nodes.nodes[0].node = "192.168.100.2:50052";
  nodes.nodes[0].layers = {0, 1};
  nodes.nodes[1].node = "head";
  nodes.nodes[1].layers = {2, 3};
  nodes.nodes[1].output_layer = true;
  TargetMachine m = gb10_machine();
  m.bandwidth_bytes_per_second = 100e9;
  const DecodeCeiling c = decode_ceiling_over_nodes(model, nodes, m);
  ASSERT_TRUE(c.available);
  ASSERT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(c.nodes[0].bytes, 1'500'000'000u);
  EXPECT_EQ(c.nodes[1].bytes, 4'500'000'000u);
  EXPECT_NEAR(c.nodes[0].seconds, 0.015, 1e-12);
  EXPECT_NEAR(c.nodes[1].seconds, 0.045, 1e-12);
  EXPECT_NEAR(c.tps, 1.0 / 0.060, 1e-9);
  EXPECT_TRUE(testing::contains(c.left_out, "no measured figure"));
  m.bandwidth_bytes_per_second = 0;
  const DecodeCeiling unknown = decode_ceiling_over_nodes(model, nodes, m);
  EXPECT_FALSE(unknown.available);
  EXPECT_TRUE(unknown.nodes.empty());
}

// A plan of the report model (16.8 GB of q4_K) on GB10 with the assumed build.
struct Gb10Planning {
  Gb10Planning() {
    testing::GgufWriter w = testing::report_model();
    w.tensor("blk.0.ffn_down.weight", {5120, 17408 * 12}, gguf::GgmlType::q4_k);
    w.write(dir.path() / "m.gguf");
    stand_ins.candidate = {dir.path() / "m.gguf", {dir.path() / "m.gguf"}, 0};
    stand_ins.model = *model::read_model(dir.path() / "m.gguf");
    stand_ins.build = PlanStandIns::Build{server::assumed_build_flags(), "assumed", {true, "test"}};
    context.sysroot = machine_sysroot(machine);
    context.note = [](NoteKind, const std::string&) {};
    context.stand_ins = &stand_ins;
  }

  // Whether `slots` slots of `ctx` tokens with cache type `type` fit, as launch plans them: its
  // fit (auto) may lower only what these settings leave to the profile, the prompt cache.
  bool fits(std::uint32_t slots, std::uint64_t ctx, const std::string& type) {
    LaunchRequest request;
    request.values = {
        {"slots", slots}, {"ctx_per_slot", ctx}, {"cache_type_k", type}, {"cache_type_v", type}};
    auto plan = plan_launch(*draft_launch(request, context), context, false);
    return plan && plan->plan.fits;
  }

  testing::TempDir dir;
  TargetMachine machine = gb10_machine();
  PlanStandIns stand_ins;
  PlannerContext context;
};

TEST(WhatFits, EachRowIsTheLargestContextThatFits) {
  Gb10Planning p;
  const auto fits = plan_what_fits({}, p.context, p.machine, 4);
  ASSERT_TRUE(fits) << fits.error().message;
  ASSERT_EQ(fits->rows.size(), 4u);
  EXPECT_EQ(fits->training_context, 262144u);
  std::uint64_t previous = fits->training_context;
  for (const WhatFitsRow& row : fits->rows) {
    ASSERT_TRUE(row.ctx_f16 && row.ctx_q8_0);
    EXPECT_LE(*row.ctx_f16, previous) << row.slots;
    EXPECT_GE(*row.ctx_q8_0, *row.ctx_f16) << row.slots;
    previous = *row.ctx_f16;
    for (const auto& [type, ctx] : {std::pair{"f16", *row.ctx_f16}, {"q8_0", *row.ctx_q8_0}}) {
      EXPECT_TRUE(p.fits(row.slots, ctx, type)) << row.slots << " " << type;
      if (ctx < fits->training_context) {
        EXPECT_FALSE(p.fits(row.slots, ctx + 256, type)) << row.slots << " " << type;
      }
    }
  }
  // With the profile's 24 GiB prompt cache lowered as launch's fit lowers it, 4 slots of the
  // whole 262k fit a GB10 (KV 64 KiB per token: 64 GiB, and 16.8 GB of weights).
  EXPECT_EQ(*fits->rows.back().ctx_f16, fits->training_context);
  EXPECT_TRUE(fits->launch.fits);
  EXPECT_TRUE(fits->launch.mtp);
  EXPECT_GT(fits->ceiling.mtp_high_tps, fits->ceiling.tps);
}

}  // namespace
}  // namespace gb10tune::launch
