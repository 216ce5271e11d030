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

  // Whether `slots` slots of `ctx` tokens with cache type `type` fit.
  bool fits(std::uint32_t slots, std::uint64_t ctx, const std::string& type) {
    LaunchRequest request;
    request.values = {{"slots", slots},
                      {"ctx_per_slot", ctx},
                      {"cache_type_k", type},
                      {"cache_type_v", type},
                      {"fit", "off"}};
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
  // Some row is bounded by memory, not by the training context (121 GB, 4 slots of 262k).
  EXPECT_LT(*fits->rows.back().ctx_f16, fits->training_context);
  EXPECT_TRUE(fits->launch.fits);
  EXPECT_TRUE(fits->launch.mtp);
  EXPECT_GT(fits->ceiling.mtp_high_tps, fits->ceiling.tps);
}

}  // namespace
}  // namespace gb10tune::launch
