// The plan on CUDA against a real CUDA llama-server on an H200: tiny models of several
// architectures (tests/fixtures/llama-server/memory/architectures-cuda.json) and a text model
// with gemma3 projectors on CUDA0 and in host memory (tests/fixtures/llama-server/mmproj/
// cuda-h200.json). Both fixtures were written from the same server's -lv 4 lines and NVML's
// per-process figure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/device_plan.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/plan/projector_plan.hpp"
#include "gb10tune/util/text_file.hpp"
#include "support/captured_header.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

constexpr double kCudaCaptureMiB = 1048576.0;

json cuda_capture_fixture(const std::string& path) {
  const auto text = read_text_file(testing::fixture(path));
  EXPECT_TRUE(text) << "cannot read " << path;
  return text ? json::parse(*text) : json::object();
}

double cuda_mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / kCudaCaptureMiB;
}

// llama.cpp prints MiB with two decimals: `bytes` must round to `logged`.
void cuda_expect_rounds_to(std::uint64_t bytes, double logged, const std::string& what) {
  EXPECT_LE(std::abs(cuda_mib(bytes) - logged), 0.005 + 1e-9)
      << what << ": planned " << bytes << " bytes (" << cuda_mib(bytes) << " MiB), llama-server "
      << logged << " MiB";
}

// What ggml's CUDA buffer adds to the weights: each tensor starts at a multiple of 128 bytes
// (ggml_backend_cuda_buffer_type_get_alignment), so a device holds up to 127 bytes more per
// tensor than the tensors' sizes. Zero for a real model's matrices; a few KiB for the tiny
// models' odd-sized vectors (gemma3n: 533 tensors on CUDA0).
std::uint64_t cuda_alignment_slack(const model::ModelFacts& facts) {
  constexpr std::uint64_t kAlign = 128;
  const auto slack = [&](std::uint64_t bytes) { return (kAlign - bytes % kAlign) % kAlign; };
  std::uint64_t total = facts.tied_output ? slack(facts.token_embedding_bytes) : 0;
  for (const model::ModelFacts::TensorSpan& span : facts.tensor_spans) {
    if (span.layer != model::ModelFacts::kInputLayer &&
        span.layer != model::ModelFacts::kUnloaded) {
      total += slack(span.bytes);
    }
  }
  return total;
}

// The weights on CUDA0: the plan's bytes plus at most the alignment slack round to `logged`.
void cuda_expect_device_weights(std::uint64_t bytes, std::uint64_t slack, double logged) {
  EXPECT_LE(cuda_mib(bytes), logged + 0.005 + 1e-9)
      << "CUDA0 weights: planned " << bytes << " bytes, llama-server " << logged << " MiB";
  EXPECT_GE(cuda_mib(bytes + slack), logged - 0.005 - 1e-9)
      << "CUDA0 weights: planned " << bytes << " bytes + " << slack
      << " bytes of tensor alignment, llama-server " << logged << " MiB";
}

// One H200 as the captures saw it: 143 156 MiB free before each run.
PlanBudget cuda_h200_budget() {
  PlanBudget budget;
  budget.mem_available = 120ull << 30;
  budget.gpus.push_back({"CUDA0", "NVIDIA H200", 143156ull << 20, kDefaultGpuReserveBytes});
  return budget;
}

// KV and recurrent state to the logged MiB, both compute buffers to the logged MiB or within
// the plan's promise (10% or 16 MiB), for every case whose architecture the plan supports.
TEST(CudaCaptures, ArchitecturesOnAnH200MatchTheServersBuffers) {
  const json fixture = cuda_capture_fixture("llama-server/memory/architectures-cuda.json");
  ASSERT_TRUE(fixture.contains("cases"));
  std::map<std::string, model::ModelFacts> models;
  for (const auto& [name, description] : fixture.at("models").items()) {
    const auto facts = testing::describe(testing::captured_header(description), name + ".gguf");
    ASSERT_TRUE(facts) << name << ": " << facts.error().message;
    if (facts->supported) {
      models.emplace(name, *facts);
    }
  }
  // Every architecture of the fixture, and the n_embd 512 variants of five of them.
  for (const std::string arch : {"glm4moe", "deepseek2", "llama4", "mistral3", "qwen35"}) {
    EXPECT_TRUE(models.count(arch)) << arch << " is not supported or not in the fixture";
    EXPECT_TRUE(models.count(arch + "-w512")) << arch << "-w512 is not in the fixture";
  }
  for (const char* arch : {"gemma2", "gemma3n", "nemotron_h"}) {
    EXPECT_TRUE(models.count(arch)) << arch << " is not supported or not in the fixture";
  }
  int checked = 0;
  for (const auto& c : fixture.at("cases")) {
    const auto model = models.find(c.at("model").get<std::string>());
    if (model == models.end()) {
      continue;
    }
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name + ": " + c.at("args").get<std::string>());
    const json& cfg = c.at("config");
    const PlanConfig config = testing::captured_plan_config(cfg);
    EXPECT_EQ(config.backend, PlanBackend::cuda);
    const auto plan = make_plan(model->second, config, cuda_h200_budget());
    ASSERT_TRUE(plan) << plan.error().message;
    ASSERT_TRUE(plan->devices);
    const json& log = c.at("log");

    // Every buffer on CUDA0 (-ngl 99): the weights (all but the input layer's token and
    // per-layer embeddings, which stay in CPU_Mapped) and the caches to the byte. glm4moe's
    // last block is a nextn block whose tensors llama.cpp skips: in neither buffer, nor in
    // the plan.
    // Known gaps of gemma3n on CUDA (docs/memory-plan.md), not asserted: its CUDA_Host buffer
    // without flash attention is 11 MiB under the plan, and its runtime was 624-691 MiB.
    const bool gemma3n = model->second.architecture == "gemma3n";
    const DevicePart& part = plan->devices->gpus.at(0);
    cuda_expect_device_weights(part.weights_bytes, cuda_alignment_slack(model->second),
                               log.at("model_mib").at("CUDA0").get<double>());
    cuda_expect_rounds_to(
        plan->devices->host.weights_bytes + plan->devices->host.mapped_extra_bytes,
        log.at("model_mib").at("CPU_Mapped").get<double>(), "CPU_Mapped weights");
    const json& caches = log.at("kv");
    ASSERT_EQ(caches.size(), plan->kv_swa_bytes > 0 ? 2u : 1u);
    EXPECT_EQ(caches.at(0).at("buffer").get<std::string>(), "CUDA0");
    cuda_expect_rounds_to(plan->kv_full_bytes, caches.at(0).at("buffer_mib").get<double>(), "KV");
    if (caches.size() == 2) {
      cuda_expect_rounds_to(plan->kv_swa_bytes, caches.at(1).at("buffer_mib").get<double>(),
                            "SWA KV");
    }
    if (log.contains("recurrent_mib")) {
      cuda_expect_rounds_to(plan->recurrent_bytes,
                            log.at("recurrent_mib").at("CUDA0").get<double>(), "recurrent");
    } else {
      EXPECT_EQ(plan->recurrent_bytes, 0u);
    }
    // The two compute buffers of a CUDA build: the graph on CUDA0, its inputs (and the token
    // lookup) pinned on the host. With the whole graph on CUDA0 (2 splits) CUDA_Host to the
    // logged MiB and CUDA0 within 8%, except deepseek2's MLA graph: 5-15 MiB (18-29%) more on
    // CUDA0 than planned, inside the plan's promise of 10% or 16 MiB only. The n_embd 64
    // models' heads (16 and 32 values) are too small for the CUDA flash-attention kernels:
    // with -fa on ggml runs the attention on the CPU backend (more splits), and the plan, which
    // puts the graph on CUDA0, holds more than both buffers together.
    const double device = log.at("compute_mib").at("CUDA0").get<double>();
    const double host = log.at("compute_mib").at("CUDA_Host").get<double>();
    const std::uint64_t splits = log.at("graph_splits").get<std::uint64_t>();
    const bool wide = name.find("-w512") != std::string::npos;
    EXPECT_EQ(splits == 2, wide || !config.flash_attention);
    if (splits == 2) {
      EXPECT_NEAR(cuda_mib(plan->buffers.main.compute_device), device, 0.08 * device)
          << "CUDA0 compute, peak " << plan->buffers.main.peak_phase;
      if (!gemma3n) {
        cuda_expect_rounds_to(plan->buffers.main.compute_host, host, "CUDA_Host compute");
      }
    } else {
      EXPECT_GE(cuda_mib(plan->buffers.main.compute()), device + host);
    }
    // NVML's per-process figure is the logged buffers plus the CUDA runtime: 585-591 MiB for
    // the n_embd 512 models; 522-586 MiB for the n_embd 64 ones with flash attention (on the
    // CPU) and 622-691 MiB without (cuBLAS's kernels and workspace). The plan's runtime term
    // (590 MiB dense, 690 MiB MoE or hybrid) covers all but the n_embd 64 dense models without
    // flash attention, which held up to 34 MiB more (docs/memory-plan.md).
    const double nvml = c.at("nvml_mib").get<double>();
    const DevicePart& gpu = plan->devices->gpus.at(0);
    const double runtime = nvml - cuda_mib(gpu.weights_bytes + gpu.cache_bytes) - device;
    EXPECT_GT(runtime, 500.0) << "NVML " << nvml << " MiB";
    EXPECT_LE(gemma3n ? 0.0 : runtime,
              cuda_mib(gpu.runtime_bytes) + (config.flash_attention ? 0.0 : 40.0))
        << "NVML " << nvml << " MiB against the plan's CUDA0 " << cuda_mib(gpu.total_bytes)
        << " MiB";
    ++checked;
  }
  EXPECT_EQ(checked, 52);
}

// The projector on a CUDA build: clip's buffers on CUDA0 (weights and graph, by the CPU rule),
// a small CPU buffer beside them (the image), and NVML's per-process figure grows by the
// projector's plan; with --no-mmproj-offload NVML stays where the text model alone was.
TEST(CudaCaptures, TheProjectorIsOnCuda0UnlessOffloadIsOff) {
  const json fixture = cuda_capture_fixture("llama-server/mmproj/cuda-h200.json");
  ASSERT_TRUE(fixture.contains("runs"));
  testing::TempDir dir;
  std::map<std::string, model::ProjectorFacts> projectors;
  for (const auto& [name, description] : fixture.at("models").items()) {
    testing::GgufWriter w = testing::captured_header(description);
    const auto path = dir.path() / (name + ".gguf");
    w.write(path);
    const auto file = gguf::read_gguf(path);
    ASSERT_TRUE(file) << file.error().message;
    const auto facts = model::describe_projector(*file);
    ASSERT_TRUE(facts) << facts.error().message;
    EXPECT_EQ(facts->weight_bytes, description.at("tensor_bytes").get<std::uint64_t>()) << name;
    projectors.emplace(name, *facts);
  }
  const auto text_model =
      testing::describe(testing::captured_header(fixture.at("text_model").at("mistral3")));
  ASSERT_TRUE(text_model) << text_model.error().message;

  std::map<std::string, const json*> runs;
  for (const auto& run : fixture.at("runs")) {
    runs.emplace(run.at("name").get<std::string>(), &run);
  }
  ASSERT_TRUE(runs.count("text-only"));
  const double text_only_nvml = runs.at("text-only")->at("nvml_mib").get<double>();
  const double text_only_rss = runs.at("text-only")->at("rss_kib").at("rss").get<double>() / 1024;
  int checked = 0;
  for (const auto& run : fixture.at("runs")) {
    const json& cfg = run.at("config");
    if (cfg.at("projector").is_null()) {
      continue;
    }
    const std::string name = run.at("name").get<std::string>();
    SCOPED_TRACE(name + ": " + run.at("args").get<std::string>());
    const bool fa = cfg.at("fa").get<bool>();
    const bool offload = cfg.at("offload").get<bool>();
    const model::ProjectorFacts& facts = projectors.at(cfg.at("projector").get<std::string>());
    const ProjectorPlan projector = plan_projector(facts, fa, offload);
    const json& clip = run.at("log").at("clip");
    EXPECT_EQ(clip.at("clip_backend").get<std::string>(), offload ? "CUDA0" : "CPU");
    cuda_expect_rounds_to(projector.weights_bytes, clip.at("model_size_mib").get<double>(),
                          "weights");
    // The graph's buffer is on clip's backend, the size the CPU build showed.
    const json& compute = clip.at("compute_mib");
    cuda_expect_rounds_to(projector.compute_bytes,
                          compute.at(offload ? "CUDA0" : "CPU").get<double>(), "compute");
    if (offload) {
      // Beside it a CPU buffer holding the f32 input image (3 × side² × 4 bytes).
      ASSERT_EQ(compute.size(), 2u);
      cuda_expect_rounds_to(projector.host_compute_bytes, compute.at("CPU").get<double>(),
                            "clip's CPU buffer");
    } else {
      EXPECT_EQ(projector.host_compute_bytes, 0u);
    }

    PlanConfig config;
    config.ctx_total = cfg.at("ctx").get<std::uint64_t>();
    config.slots = cfg.at("slots").get<std::uint32_t>();
    config.flash_attention = fa;
    config.cache_ram_bytes = 0;
    config.overhead_bytes = 0;
    config.backend = PlanBackend::cuda;
    config.gpu_layers = 99;
    config.projector = facts;
    config.projector_offload = offload;
    const auto plan = make_plan(*text_model, config, cuda_h200_budget());
    ASSERT_TRUE(plan && plan->devices) << name;
    const DevicePart& gpu = plan->devices->gpus.at(0);
    const double nvml = run.at("nvml_mib").get<double>();
    const double rss = run.at("rss_kib").at("rss").get<double>() / 1024;
    if (offload) {
      EXPECT_EQ(gpu.projector_bytes, projector.device_bytes());
      EXPECT_EQ(plan->devices->host.projector_bytes, projector.host_compute_bytes);
      if (fa) {
        // Against the text model alone with the same flags: NVML grew by the projector's part
        // of the plan (within 5%, or 4 MiB for the 2 MiB projector).
        const double grown = nvml - text_only_nvml;
        EXPECT_NEAR(grown, cuda_mib(projector.device_bytes()), std::max(0.05 * grown, 4.0))
            << "NVML grew " << grown << " MiB, the plan's projector on CUDA0 "
            << cuda_mib(projector.device_bytes());
      }
    } else {
      EXPECT_EQ(gpu.projector_bytes, 0u);
      EXPECT_EQ(plan->devices->host.projector_bytes, projector.bytes());
      // Nothing of it on the GPU; in host memory the weights are resident (read, not mapped),
      // the compute buffer only as far as the warm-up touched it (16 MiB: clip's own heap).
      EXPECT_NEAR(nvml, text_only_nvml, 2.0);
      EXPECT_GE(rss - text_only_rss, 0.95 * cuda_mib(projector.weights_bytes));
      EXPECT_LE(rss - text_only_rss, cuda_mib(projector.bytes()) + 16.0);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace gb10tune::plan
