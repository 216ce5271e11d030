// CPU repacking of quantized weights (plan/cpu_repack.hpp): which types the CPU backend of a
// llama.cpp build (3f545be, ggml-cpu/repack.cpp) repacks for which features, which tensors,
// the CPU_REPACK buffer and the originals that stay resident, and how the plan shows it.
#include "gb10tune/plan/cpu_repack.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gb10tune/plan/calibration.hpp"
#include "gb10tune/plan/expected_memory.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/render/plan_render.hpp"
#include "gb10tune/util/text_file.hpp"
#include "gb10tune/verify/checks.hpp"
#include "support/captured_header.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using gguf::GgmlType;

RepackFeatures build_with(std::vector<std::string> names) {
  return repack_features_of_build(std::move(names), "a test build");
}

// testing::quantized_llama, described.
model::ModelFacts repack_llama(GgmlType type, std::uint32_t blocks, std::uint64_t kv_rows = 64,
                               bool tied = false, bool output_first = false) {
  const auto facts = testing::describe(
      testing::quantized_llama(type, blocks, kv_rows, tied, output_first), "repack.gguf");
  EXPECT_TRUE(facts) << facts.error().message;
  return *facts;
}

std::uint64_t type_bytes(GgmlType type, std::uint64_t elements) {
  return *gguf::ggml_bytes(type, elements);
}

// -c 4096 on an AVX2 build.
PlanConfig avx2_plan_config() {
  PlanConfig config;
  config.ctx_total = 4096;
  config.repack.features = build_with({"AVX2", "REPACK"});
  return config;
}

RepackPlan repack_all_on_cpu(const model::ModelFacts& model, const RepackSetting& setting) {
  return plan_cpu_repack(model, setting, [](std::int64_t) { return true; });
}

TEST(CpuRepackRules, AnAvx2BuildRepacksQ4_0Q4_KIq4_NlAndMxfp4By8Rows) {
  const RepackFeatures avx2 = build_with({"SSE3", "AVX", "AVX2", "F16C", "FMA", "REPACK"});
  EXPECT_EQ(repack_row_multiple(avx2, GgmlType::q4_0), 8u);
  EXPECT_EQ(repack_row_multiple(avx2, GgmlType::q4_k), 8u);
  EXPECT_EQ(repack_row_multiple(avx2, GgmlType::iq4_nl), 8u);
  EXPECT_EQ(repack_row_multiple(avx2, GgmlType::mxfp4), 8u);
  for (const GgmlType other : {GgmlType::q2_k, GgmlType::q5_k, GgmlType::q6_k, GgmlType::q8_0,
                               GgmlType::iq4_xs, GgmlType::bf16, GgmlType::f16, GgmlType::q4_1}) {
    EXPECT_EQ(repack_row_multiple(avx2, other), 0u) << gguf::ggml_type_info(other).name;
  }
  // AVX-512F adds q2_K.
  EXPECT_EQ(repack_row_multiple(build_with({"AVX2", "AVX512", "REPACK"}), GgmlType::q2_k), 8u);
  // Built without GGML_CPU_REPACK: nothing.
  EXPECT_EQ(repack_row_multiple(build_with({"AVX2", "AVX512"}), GgmlType::q4_0), 0u);
}

TEST(CpuRepackRules, AnArmBuildWithDotprodAndI8mmRepacksMoreTypes) {
  const RepackFeatures gb10 = build_with(
      {"NEON", "ARM_FMA", "FP16_VA", "MATMUL_INT8", "SVE", "DOTPROD", "OPENMP", "REPACK"});
  EXPECT_EQ(repack_row_multiple(gb10, GgmlType::q4_0), 4u);
  EXPECT_EQ(repack_row_multiple(gb10, GgmlType::q8_0), 4u);
  EXPECT_EQ(repack_row_multiple(gb10, GgmlType::iq4_nl), 4u);
  EXPECT_EQ(repack_row_multiple(gb10, GgmlType::mxfp4), 4u);
  for (const GgmlType k : {GgmlType::q4_k, GgmlType::q5_k, GgmlType::q6_k}) {
    EXPECT_EQ(repack_row_multiple(gb10, k), 8u) << gguf::ggml_type_info(k).name;
  }
  EXPECT_EQ(repack_row_multiple(gb10, GgmlType::q2_k), 0u);
  EXPECT_EQ(repack_row_multiple(gb10, GgmlType::iq4_xs), 0u);
  // i8mm without dotprod: iq4_nl and mxfp4 need dotprod.
  const RepackFeatures i8mm = build_with({"NEON", "MATMUL_INT8", "REPACK"});
  EXPECT_EQ(repack_row_multiple(i8mm, GgmlType::q8_0), 4u);
  EXPECT_EQ(repack_row_multiple(i8mm, GgmlType::iq4_nl), 0u);
  // The GGML_NATIVE trap on GB10 (K11): a plain armv8-a build has NEON only and repacks nothing.
  const RepackFeatures plain = build_with({"NEON", "ARM_FMA", "FP16_VA", "REPACK"});
  for (const gguf::GgmlTypeInfo& info : gguf::ggml_types()) {
    EXPECT_EQ(repack_row_multiple(plain, info.type), 0u) << info.name;
  }
}

TEST(CpuRepackRules, UnknownFeaturesCountEveryTypeSomeCpuRepacks) {
  const RepackFeatures unknown;
  for (const GgmlType type : {GgmlType::q4_0, GgmlType::q4_k, GgmlType::q5_k, GgmlType::q6_k,
                              GgmlType::q8_0, GgmlType::q2_k, GgmlType::iq4_nl, GgmlType::mxfp4}) {
    EXPECT_GT(repack_row_multiple(unknown, type), 0u) << gguf::ggml_type_info(type).name;
  }
  EXPECT_EQ(repack_row_multiple(unknown, GgmlType::iq4_xs), 0u);
  EXPECT_EQ(repack_row_multiple(unknown, GgmlType::bf16), 0u);
  // AMX and KleidiAI buffer types come first and are not modelled: unknown.
  EXPECT_EQ(build_with({"AVX2", "AMX_INT8", "REPACK"}).evidence, RepackEvidence::unknown);
  EXPECT_EQ(build_with({"NEON", "KLEIDIAI", "REPACK"}).evidence, RepackEvidence::unknown);
}

TEST(CpuRepackRules, ACpuBoundsWhatABuildRunningOnItCanUse) {
  sys::CpuInfo arm;
  arm.family = sys::CpuFamily::arm;
  arm.model = "10x Cortex-X925 + 10x Cortex-A725";
  arm.features = {"dotprod", "i8mm", "bf16", "sve", "sve2", "fp16"};
  const RepackFeatures gb10 = repack_features_of_cpu(arm);
  EXPECT_EQ(gb10.evidence, RepackEvidence::cpu);
  EXPECT_EQ(repack_row_multiple(gb10, GgmlType::q6_k), 8u);
  EXPECT_NE(gb10.source.find("Cortex-X925"), std::string::npos);
  sys::CpuInfo x86;
  x86.family = sys::CpuFamily::x86;
  x86.features = {"avx", "avx2", "fma", "f16c"};
  const RepackFeatures workstation = repack_features_of_cpu(x86);
  EXPECT_EQ(repack_row_multiple(workstation, GgmlType::q4_0), 8u);
  EXPECT_EQ(repack_row_multiple(workstation, GgmlType::q2_k), 0u);  // no AVX-512F
  sys::CpuInfo other;
  EXPECT_EQ(repack_features_of_cpu(other).evidence, RepackEvidence::unknown);
}

TEST(CpuRepackOptions, TheLastSpellingWinsAndLoadModesMapOrRead) {
  EXPECT_TRUE(parse_repack_options({"-m", "x"}).enabled);
  EXPECT_FALSE(parse_repack_options({"-nr"}).enabled);
  EXPECT_FALSE(parse_repack_options({"--repack", "--no-repack"}).enabled);
  EXPECT_TRUE(parse_repack_options({"--no-repack", "--repack"}).enabled);
  EXPECT_TRUE(parse_repack_options({"--no-host"}).no_host);
  EXPECT_FALSE(parse_repack_options({}).mmap.has_value());
  EXPECT_EQ(parse_repack_options({"--no-mmap"}).mmap, false);
  EXPECT_EQ(parse_repack_options({"--no-mmap", "--load-mode", "auto"}).mmap, std::nullopt);
  EXPECT_EQ(parse_repack_options({"-lm", "none"}).mmap, false);
  EXPECT_EQ(parse_repack_options({"--load-mode", "mmap+mlock"}).mmap, true);
  EXPECT_EQ(parse_repack_options({"--mlock"}).mmap, false);
  // A CUDA build with a GPU in use: its host buffer comes first, unless --no-host; on an
  // integrated GPU --load-mode auto reads the file.
  const RepackSetting cuda = repack_setting(parse_repack_options({}), {}, true, true);
  EXPECT_TRUE(cuda.gpu_host_buffer_first);
  EXPECT_FALSE(cuda.mmap);
  const RepackSetting no_host =
      repack_setting(parse_repack_options({"--no-host"}), {}, true, false);
  EXPECT_FALSE(no_host.gpu_host_buffer_first);
  EXPECT_TRUE(no_host.mmap);
}

// The token embedding is a lookup and stays; a matrix whose rows do not divide by the
// interleave stays; norms are f32; the q6_K output is not repacked on x86. The copy has the
// originals' sizes, each padded to 32 bytes.
TEST(CpuRepackPlan, ARepackedCopyOfEachMatrixTheBuildTakes) {
  const auto model = repack_llama(GgmlType::q4_0, 2, /*kv_rows=*/68);  // 68 % 8 != 0
  RepackSetting setting;
  setting.features = build_with({"AVX2", "REPACK"});
  const RepackPlan plan = repack_all_on_cpu(model, setting);
  EXPECT_TRUE(plan.applies);
  EXPECT_FALSE(plan.assumed);
  // Per block: q and output (256 x 256), gate, up and down (256 x 512): 5 q4_0 matrices.
  const std::uint64_t per_block =
      2 * type_bytes(GgmlType::q4_0, 256 * 256) + 3 * type_bytes(GgmlType::q4_0, 256 * 512);
  EXPECT_EQ(plan.buffer_bytes, 2 * per_block);
  ASSERT_EQ(plan.types.size(), 1u);
  EXPECT_EQ(plan.types[0].type, GgmlType::q4_0);
  EXPECT_EQ(plan.types[0].tensors, 10u);
  // token_embd first and the output last span every repacked original: they stay mapped.
  EXPECT_EQ(plan.released_bytes, 0u);
  EXPECT_NE(plan.basis.find("q4_0, q4_K, iq4_nl, mxfp4"), std::string::npos) << plan.basis;

  // Rows of 68 divide by ARM's interleave of 4 for q4_0.
  setting.features = build_with({"NEON", "DOTPROD", "REPACK"});
  EXPECT_EQ(repack_all_on_cpu(model, setting).types[0].tensors, 14u);
}

TEST(CpuRepackPlan, OriginalsOutsideTheMappedRangeOrWithoutMmapLeaveMemory) {
  const auto model = repack_llama(GgmlType::q4_0, 1, /*kv_rows=*/8, /*tied=*/false,
                                  /*output_first=*/true);
  RepackSetting setting;
  setting.features = build_with({"AVX2", "REPACK"});
  const RepackPlan plan = repack_all_on_cpu(model, setting);
  const std::uint64_t originals = 2 * type_bytes(GgmlType::q4_0, 256 * 256) +
                                  2 * type_bytes(GgmlType::q4_0, 256 * 8) +
                                  3 * type_bytes(GgmlType::q4_0, 256 * 512);
  EXPECT_EQ(plan.buffer_bytes, originals);
  // Output first, token_embd next, then the block: the mapped range ends with its last norm
  // (ffn_norm), so ffn_gate, ffn_up and ffn_down, after it, are unmapped.
  EXPECT_EQ(plan.released_bytes, 3 * type_bytes(GgmlType::q4_0, 256 * 512));
  setting.mmap = false;
  EXPECT_EQ(repack_all_on_cpu(model, setting).released_bytes, originals);
}

TEST(CpuRepackPlan, ATiedOutputRepacksItsCopyOfTheTokenEmbedding) {
  const auto model = repack_llama(GgmlType::q4_0, 1, 64, /*tied=*/true);
  RepackSetting setting;
  setting.features = build_with({"AVX2", "REPACK"});
  const RepackPlan with_output = repack_all_on_cpu(model, setting);
  const RepackPlan without_output = plan_cpu_repack(
      model, setting, [](std::int64_t layer) { return layer != model::ModelFacts::kOutputLayer; });
  EXPECT_EQ(with_output.buffer_bytes - without_output.buffer_bytes,
            type_bytes(GgmlType::q4_0, 256 * 1000));
}

TEST(CpuRepackPlan, NothingWithNoRepackOrAGpuHostBufferFirst) {
  const auto model = repack_llama(GgmlType::q4_k, 1);
  RepackSetting setting;
  setting.features = build_with({"AVX2", "REPACK"});
  EXPECT_GT(repack_all_on_cpu(model, setting).buffer_bytes, 0u);
  setting.enabled = false;
  EXPECT_EQ(repack_all_on_cpu(model, setting).buffer_bytes, 0u);
  EXPECT_FALSE(repack_all_on_cpu(model, setting).applies);
  setting.enabled = true;
  setting.gpu_host_buffer_first = true;
  const RepackPlan cuda = repack_all_on_cpu(model, setting);
  EXPECT_EQ(cuda.buffer_bytes, 0u);
  EXPECT_NE(cuda.basis.find("--no-host"), std::string::npos);
  // f16 and q8_0 (x86) have no interleaved kernel.
  setting.gpu_host_buffer_first = false;
  EXPECT_EQ(repack_all_on_cpu(repack_llama(GgmlType::q8_0, 1), setting).buffer_bytes, 0u);
}

// The memory plan: the repacked copy is its own figure, in the load and the total; with CUDA
// only the layers -ngl leaves on the CPU count, and only without the GPU's host buffer first.
TEST(CpuRepackPlan, TheMemoryPlanCountsTheCopyOnTheCpuAndForLayersLeftOnIt) {
  const auto model = repack_llama(GgmlType::q4_0, 4);
  PlanConfig config = avx2_plan_config();
  const auto cpu = make_plan(model, config, {});
  ASSERT_TRUE(cpu);
  // q and output, k and v (64 rows), gate, up and down.
  const std::uint64_t per_block = 2 * type_bytes(GgmlType::q4_0, 256 * 256) +
                                  2 * type_bytes(GgmlType::q4_0, 256 * 64) +
                                  3 * type_bytes(GgmlType::q4_0, 256 * 512);
  EXPECT_EQ(cpu->repack_bytes, 4 * per_block);
  EXPECT_EQ(cpu->weights_bytes, model.weight_bytes);
  config.repack.enabled = false;
  const auto off = make_plan(model, config, {});
  ASSERT_TRUE(off);
  EXPECT_EQ(cpu->load_bytes() - off->load_bytes(), 4 * per_block);
  EXPECT_EQ(cpu->total_bytes - off->total_bytes, 4 * per_block);

  // CUDA, -ngl 3 of 5: blocks 0-1 stay on the CPU.
  config.repack.enabled = true;
  config.backend = PlanBackend::cuda;
  config.gpu_layers = 3;
  PlanBudget budget;
  budget.mem_available = 64ull << 30;
  budget.gpus.push_back({"CUDA0", "GPU", 16ull << 30, kDefaultGpuReserveBytes});
  const auto no_host = make_plan(model, config, budget);
  ASSERT_TRUE(no_host && no_host->devices);
  EXPECT_EQ(no_host->repack_bytes, 2 * per_block);
  EXPECT_EQ(no_host->devices->host.repack_bytes, 2 * per_block);
  // The mapped range now ends with block 1's ffn_norm: its gate, up and down leave memory.
  const std::uint64_t released = 3 * type_bytes(GgmlType::q4_0, 256 * 512);
  EXPECT_EQ(no_host->repack.released_bytes, released);
  config.repack.gpu_host_buffer_first = true;
  const auto host_first = make_plan(model, config, budget);
  ASSERT_TRUE(host_first && host_first->devices);
  EXPECT_EQ(host_first->repack_bytes, 0u);
  EXPECT_EQ(host_first->devices->host.total_bytes + 2 * per_block - released,
            no_host->devices->host.total_bytes);
}

TEST(CpuRepackReport, ARowOfItsOwnInTextAndJson) {
  const auto model = repack_llama(GgmlType::q4_0, 2);
  PlanConfig config = avx2_plan_config();
  const auto plan = make_plan(model, config, {});
  ASSERT_TRUE(plan);
  const std::string text =
      render::render_plan_text(model, config, *plan, render::TextStyle::plain());
  EXPECT_NE(text.find("CPU repack "), std::string::npos) << text;
  EXPECT_NE(text.find("CPU_REPACK: q4_0 x14"), std::string::npos) << text;
  const auto doc = render::plan_to_json(model, config, *plan);
  EXPECT_EQ(doc["plan"]["repack_bytes"], plan->repack_bytes);
  EXPECT_EQ(doc["plan"]["repack"]["evidence"], "build");
  EXPECT_EQ(doc["plan"]["repack"]["types"][0]["type"], "q4_0");
  EXPECT_EQ(doc["plan"]["repack"]["types"][0]["tensors"], 14);
  // Unknown features: the row says so.
  config.repack.features = RepackFeatures{};
  const auto assumed = make_plan(model, config, {});
  ASSERT_TRUE(assumed);
  const std::string unknown =
      render::render_plan_text(model, config, *assumed, render::TextStyle::plain());
  EXPECT_NE(unknown.find("CPU repack (assumed)"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("unknown whether repacked"), std::string::npos) << unknown;
}

// Two decimals of MiB, as llama.cpp prints its buffer sizes.
double logged_mib(std::uint64_t bytes) {
  return std::round(static_cast<double>(bytes) / testing::kBytesPerMiB * 100.0) / 100.0;
}

// Real runs of a CPU llama-server (tests/fixtures/llama-server/memory/repack.json, written by
// capture_repack.py beside it): for each, the plan made from the model's header, the flags and
// the build's system_info line. Its CPU repack row is the CPU_REPACK buffer the server logged
// (two decimals); its weights are the mapped buffer (CPU_Mapped, the range llama.cpp keeps)
// or, without mmap, the CPU buffer, within 0.02 MiB (the padding between tensors); the plan
// at load is within 5% of what launch measures (RSS, plus the compute buffer's pages an idle
// server has not touched), and the process holds no more than the plan's total.
TEST(CpuRepackCaptures, EachRealRunMatchesItsBuffersAndItsProcess) {
  const auto text = read_text_file(testing::fixture("llama-server/memory/repack.json"));
  ASSERT_TRUE(text) << "cannot read the repack fixture";
  const auto doc = nlohmann::json::parse(*text);
  std::map<std::string, model::ModelFacts> models;
  for (const auto& [name, description] : doc.at("models").items()) {
    const auto facts = testing::describe(testing::captured_header(description), name + ".gguf");
    ASSERT_TRUE(facts) << name << ": " << facts.error().message;
    models.emplace(name, *facts);
  }
  int repacked = 0;
  for (const auto& run : doc.at("runs")) {
    SCOPED_TRACE(run.at("name").get<std::string>() + ": " + run.at("args").get<std::string>());
    const auto& log = run.at("log");
    PlanConfig config = testing::captured_plan_config(run.at("config"));
    config.overhead_bytes = kDefaultOverheadBytes;
    config.repack.enabled = run.at("config").at("repack").get<bool>();
    config.repack.mmap = run.at("config").at("mmap").get<bool>();
    config.repack.features = repack_features_of_build(
        verify::parse_system_info_features(log.at("system_info").get<std::string>()),
        "the run's system_info line");
    const model::ModelFacts& model = models.at(run.at("model").get<std::string>());
    const auto plan = make_plan(model, config, {});
    ASSERT_TRUE(plan) << plan.error().message;
    const auto& buffers = log.at("model_mib");
    EXPECT_EQ(logged_mib(plan->repack_bytes), buffers.value("CPU_REPACK", 0.0));
    repacked += plan->repack_bytes > 0 ? 1 : 0;
    EXPECT_NEAR(static_cast<double>(plan->weights_bytes) / testing::kBytesPerMiB,
                buffers.value(config.repack.mmap ? "CPU_Mapped" : "CPU", 0.0), 0.02);

    ProcessReading reading;
    const auto& rss = run.at("rss_kib");  // /proc/<pid>/status, kB
    reading.vm_rss = rss.at("VmRSS").get<std::uint64_t>() << 10;
    reading.rss_anon = rss.at("RssAnon").get<std::uint64_t>() << 10;
    reading.rss_file = rss.at("RssFile").get<std::uint64_t>() << 10;
    reading.rss_shmem = rss.at("RssShmem").get<std::uint64_t>() << 10;
    // The server's buffer lines again, read as launch reads them.
    std::string lines;
    for (const auto& [name, mib] : buffers.items()) {
      lines +=
          fmt::format("load_tensors: {} model buffer size = {:.2f} MiB\n", name, mib.get<double>());
    }
    for (const auto& kv : log.at("kv")) {
      lines += fmt::format("llama_kv_cache: CPU KV buffer size = {:.2f} MiB\n",
                           kv.at("buffer_mib").get<double>());
    }
    for (const char* kind : {"compute", "output"}) {
      for (const auto& [name, mib] : log.at(fmt::format("{}_mib", kind)).items()) {
        lines += fmt::format("{}: {} {} buffer size = {:.2f} MiB\n", kind, name, kind,
                             mib.get<double>());
      }
    }
    reading.log = parse_buffer_lines(lines);
    const Measurement measured = measure(*plan, PlanBackend::cpu, reading);
    ASSERT_TRUE(measured.measured_bytes);
    // The figure an idle server holds: the CPU compute buffer is touched only by batches.
    const auto load = static_cast<double>(uncalibrated_memory(*plan, PlanBackend::cpu).at_load);
    EXPECT_NEAR(static_cast<double>(*measured.measured_bytes), load, 0.05 * load)
        << "plan at load " << load / testing::kBytesPerMiB << " MiB, measured "
        << static_cast<double>(*measured.measured_bytes) / testing::kBytesPerMiB << " MiB ("
        << measured.how << ")";
    EXPECT_LE(reading.rss_anon + reading.rss_file, plan->total_bytes);
  }
  EXPECT_GE(repacked, 8);
}

}  // namespace
}  // namespace gb10tune::plan
