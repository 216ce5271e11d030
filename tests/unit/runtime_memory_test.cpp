// When the CUDA warm-up loads cuBLAS (warmup_loads_cublas), against every fully offloaded
// capture of a CUDA llama-server (H200, 3f545be): a run without flash attention held 60 MiB or
// more beyond its logged buffers than the same model's runs with flash attention exactly when
// the rule says so. And the process's own memory at load and in service.
#include "gb10tune/plan/runtime_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "support/captured_header.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

// NVML per process minus the CUDA0 buffers the run logged (weights, KV, recurrent state,
// compute): the process's own part on the device.
double runtime_device_mib(const json& run) {
  const json& log = run.at("log");
  const auto on_device = [](const json& buffers) {
    double mib = 0;
    for (auto it = buffers.begin(); it != buffers.end(); ++it) {
      mib += it.key().starts_with("CUDA") ? it.value().get<double>() : 0;
    }
    return mib;
  };
  double buffers = on_device(log.at("model_mib")) +
                   on_device(log.value("recurrent_mib", json::object())) +
                   log.at("compute_mib").value("CUDA0", 0.0);
  for (const json& kv : log.value("kv", json::array())) {
    buffers += kv.at("buffer").get<std::string>().starts_with("CUDA")
                   ? kv.at("buffer_mib").get<double>()
                   : 0;
  }
  return run.at("nvml_mib").get<double>() - buffers;
}

struct WarmupCase {
  std::string name;
  bool predicted = false;
  double extra_mib = 0;  // over the least of the same model's runs with flash attention
};

// The fully offloaded runs without flash attention of `fixture` (its runs under `key`).
std::vector<WarmupCase> warmup_cases(const json& fixture, const std::string& key) {
  const auto models = testing::captured_models(fixture.at("models"));
  std::map<std::string, double> with_fa;
  for (const json& run : fixture.at(key)) {
    const json& config = run.at("config");
    if (config.value("fa", true) && config.value("ngl", 99) >= 99) {
      const std::string model = run.at("model").get<std::string>();
      const double mib = runtime_device_mib(run);
      with_fa[model] = with_fa.contains(model) ? std::min(with_fa[model], mib) : mib;
    }
  }
  std::vector<WarmupCase> out;
  for (const json& run : fixture.at(key)) {
    const json& config = run.at("config");
    const std::string model = run.at("model").get<std::string>();
    if (config.value("fa", true) || config.value("ngl", 99) < 99 || !with_fa.contains(model)) {
      continue;
    }
    const PlanConfig plan_config = testing::captured_plan_config(config);
    const bool predicted =
        warmup_loads_cublas(models.at(model), {false, plan_config.cache_k, plan_config.cache_v, 0});
    out.push_back({run.at("name").get<std::string>(), predicted,
                   runtime_device_mib(run) - with_fa.at(model)});
  }
  return out;
}

TEST(RuntimeMemory, TheWarmUpLoadsCublasExactlyWhereTheCapturesHeldItAtLoad) {
  std::vector<WarmupCase> cases =
      warmup_cases(testing::fixture_json("llama-server/memory/architectures-cuda.json"), "cases");
  const auto heldout =
      warmup_cases(testing::fixture_json("llama-server/memory/heldout-cuda.json"), "runs");
  cases.insert(cases.end(), heldout.begin(), heldout.end());
  int loaded = 0;
  for (const WarmupCase& c : cases) {
    EXPECT_EQ(c.predicted, c.extra_mib > 60) << c.name << ": " << c.extra_mib << " MiB more";
    loaded += c.predicted;
  }
  // 14 models with a run without flash attention: heads of 8-48 values (glm4moe, deepseek2's
  // MLA, llama4, mistral3, gemma2, gemma3n, nemotron_h, qwen35) loaded it; heads of 64, 128,
  // 256 and 576 and a q4_0 K cache did not.
  EXPECT_EQ(cases.size(), 19U);
  EXPECT_EQ(loaded, 8);
}

TEST(RuntimeMemory, OnlyAnOffloadedAttentionLayerWithAFloatCacheCounts) {
  const auto models = testing::captured_models(
      testing::fixture_json("llama-server/memory/offload-validation-cuda.json").at("models"));
  const model::ModelFacts& d80 = models.at("v-d80");  // K and V heads of 80 values
  EXPECT_TRUE(warmup_loads_cublas(d80, {false, gguf::GgmlType::f16, gguf::GgmlType::f16, 0}));
  EXPECT_FALSE(warmup_loads_cublas(d80, {true, gguf::GgmlType::f16, gguf::GgmlType::f16, 0}));
  // Quantized K and V: mmvq; no block offloaded: the CPU multiplies.
  EXPECT_FALSE(warmup_loads_cublas(d80, {false, gguf::GgmlType::q8_0, gguf::GgmlType::q8_0, 0}));
  EXPECT_FALSE(
      warmup_loads_cublas(d80, {false, gguf::GgmlType::f16, gguf::GgmlType::f16, d80.block_count}));
  // K quantized, V f16 with 80 rows: the scores·V product still goes to cuBLAS.
  EXPECT_TRUE(warmup_loads_cublas(d80, {false, gguf::GgmlType::q4_0, gguf::GgmlType::f16, 0}));
}

// cuBLAS loaded by the warm-up moves its device share from service to load; its host share
// stays: a llama with heads of 80 at -ngl 3 without flash attention, whose warm-up loads it,
// still grew its heap by 198 MiB in service (traffic-heldout-cuda.json).
TEST(RuntimeMemory, TheWarmUpMovesCublasToLoadOnTheDeviceAndAddsItOnTheHost) {
  const auto models = testing::captured_models(
      testing::fixture_json("llama-server/memory/offload-validation-cuda.json").at("models"));
  const model::ModelFacts& d80 = models.at("v-d80");
  const RuntimeMemory idle = runtime_memory(d80, PlanBackend::cuda);
  const RuntimeMemory warm = runtime_memory(d80, PlanBackend::cuda, {.warmup_cublas = true});
  EXPECT_EQ(warm.device_at_load - idle.device_at_load, 100ull << 20);
  EXPECT_EQ(warm.host_at_load - idle.host_at_load, 90ull << 20);
  EXPECT_EQ(warm.device, idle.device);
  EXPECT_EQ(warm.host - idle.host, 90ull << 20);
  EXPECT_EQ(runtime_memory(d80, PlanBackend::cpu, {.warmup_cublas = true}).device, 0U);
}

// The device in service: cuBLAS (100 MiB, unless the warm-up loaded it) and the memory pool at
// the temporaries of the largest product (a micro-batch below 512 counts as 512), plus 8 MiB:
// a dense product's f16 input and result at the widest activation; a MoE's tokens sorted per
// used expert, in and out; without flash attention the f16 scores of a full attention; with
// blocks in host memory 70 MiB per 512 tokens more (traffic-*-cuda.json).
TEST(RuntimeMemory, ThePoolInServiceFollowsTheLargestProductsTemporaries) {
  const auto models = testing::captured_models(
      testing::fixture_json("llama-server/memory/offload-validation-cuda.json").at("models"));
  const model::ModelFacts& dense = models.at("v-d80");    // n_embd 2560, n_ff 6912, 32 heads
  const model::ModelFacts& moe = models.at("v-moe96x6");  // n_embd 3072, 6 of 96 x 384
  const auto in_service = [](const model::ModelFacts& m, RuntimeShape shape) {
    const RuntimeMemory r = runtime_memory(m, PlanBackend::cuda, shape);
    return r.device - r.device_at_load;
  };
  constexpr std::uint64_t kMiB = 1ull << 20;
  EXPECT_EQ(in_service(dense, {}), 100 * kMiB + 512ull * 6912 * 4 + 8 * kMiB);
  EXPECT_EQ(in_service(dense, {.ubatch = 1024}), 100 * kMiB + 1024ull * 6912 * 4 + 8 * kMiB);
  EXPECT_EQ(in_service(dense, {.ubatch = 256}), in_service(dense, {}));
  EXPECT_EQ(in_service(moe, {}), 100 * kMiB + 512ull * 6 * 4 * (3072 + 384) + 8 * kMiB);
  const RuntimeShape no_flash{.flash_attention = false, .attention_cells = 4096};
  EXPECT_EQ(in_service(dense, no_flash), 100 * kMiB + 4096ull * 512 * 32 * 2 + 8 * kMiB);
  EXPECT_EQ(in_service(moe, {.partial_offload = true, .ubatch = 1024}),
            100 * kMiB + 1024ull * 6 * 4 * (3072 + 384) + 140 * kMiB + 8 * kMiB);
  RuntimeShape warm = no_flash;
  warm.warmup_cublas = true;
  EXPECT_EQ(in_service(dense, warm), 4096ull * 512 * 32 * 2 + 8 * kMiB);
  // The host: 300 MiB of heap from its figure at load, the same for every shape.
  const RuntimeMemory host = runtime_memory(moe, PlanBackend::cuda, {.partial_offload = true});
  EXPECT_EQ(host.host - host.host_at_load, 300 * kMiB);
}

}  // namespace
}  // namespace gb10tune::plan
