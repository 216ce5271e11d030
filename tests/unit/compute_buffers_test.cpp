// The plan's compute, output and KV figures against what real llama-server builds printed for
// the same model header and flags (tests/fixtures/llama-server/memory/cases.json: the buffer
// lines of `-lv 4`, and the process's RSS after load).
#include "gb10tune/plan/compute_buffers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/plan/backend_choice.hpp"
#include "gb10tune/plan/expected_memory.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/server/server_build.hpp"
#include "gb10tune/util/text_file.hpp"
#include "support/captured_header.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_context.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

using testing::kBytesPerMiB;

double mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / kBytesPerMiB;
}

json load_compute_cases() {
  const auto text = read_text_file(testing::fixture("llama-server/memory/cases.json"));
  EXPECT_TRUE(text) << "cannot read the memory fixture";
  return text ? json::parse(*text) : json::object();
}

// The model header of a captured case, rebuilt from its metadata and tensor infos (the
// tokenizer is left out: the vocabulary size comes from token_embd's shape).
model::ModelFacts model_of(const json& description, const testing::TempDir& dir,
                           const std::string& name) {
  testing::GgufWriter w = testing::captured_header(description);
  const auto path = dir.path() / (name + ".gguf");
  w.write(path);
  const auto file = gguf::read_gguf(path);
  EXPECT_TRUE(file) << file.error().message;
  const auto facts = model::describe_model(*file);
  EXPECT_TRUE(facts) << facts.error().message;
  return *facts;
}

PlanConfig config_of(const json& c) {
  PlanConfig config;
  config.ctx_total = c.at("ctx").get<std::uint64_t>();
  config.slots = c.at("slots").get<std::uint32_t>();
  config.kv_unified = c.at("kvu").get<bool>();
  config.flash_attention = c.at("fa").get<bool>();
  config.ubatch = c.value("ubatch", 512u);
  config.mtp = c.value("mtp", false);
  config.draft_n_max = c.value("draft_n_max", 3u);
  config.cache_ram_bytes = 0;
  config.overhead_bytes = 0;
  config.backend =
      c.value("backend", std::string("cpu")) == "cuda" ? PlanBackend::cuda : PlanBackend::cpu;
  return config;
}

// Within 10% or 16 MiB, the tolerance the plan promises for compute buffers.
void expect_compute_close(double planned, double logged, const std::string& what) {
  const double tolerance = std::max(0.10 * logged, 16.0);
  EXPECT_NEAR(planned, logged, tolerance) << what << ": planned " << planned << " MiB, "
                                          << "llama-server " << logged << " MiB";
}

TEST(ComputeBuffers, EveryCapturedRunMatchesTheServersBufferLines) {
  const json cases = load_compute_cases();
  ASSERT_TRUE(cases.contains("cases"));
  ASSERT_GE(cases.at("cases").size(), 29u);
  testing::TempDir dir;
  std::map<std::string, model::ModelFacts> models;
  for (const auto& [name, description] : cases.at("models").items()) {
    models.emplace(name, model_of(description, dir, name));
  }
  for (const auto& c : cases.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name + ": " + c.at("args").get<std::string>());
    const model::ModelFacts& facts = models.at(c.at("model").get<std::string>());
    const PlanConfig config = config_of(c.at("config"));
    const auto plan = make_plan(facts, config, {});
    ASSERT_TRUE(plan) << plan.error().message;
    const json& log = c.at("log");
    // KV: llama.cpp prints MiB with two decimals, one line per cache (full, SWA).
    double kv_logged = 0;
    for (const auto& line : log.at("kv_mib")) {
      kv_logged += line.get<double>();
    }
    EXPECT_NEAR(mib(plan->kv_full_bytes + plan->kv_swa_bytes), kv_logged,
                0.0051 * static_cast<double>(log.at("kv_mib").size()));
    if (log.contains("recurrent_mib")) {
      EXPECT_NEAR(mib(plan->recurrent_bytes), log.at("recurrent_mib").get<double>(),
                  0.0051);  // two decimals, rounded
    }
    if (log.contains("mtp_kv_mib")) {
      EXPECT_NEAR(mib(plan->mtp_kv_bytes), log.at("mtp_kv_mib").get<double>(),
                  0.0051);  // two decimals, rounded
    }
    const json& compute = log.at("compute_mib");
    if (config.backend == PlanBackend::cuda) {
      expect_compute_close(mib(plan->buffers.main.compute_device),
                           compute.at("CUDA0").get<double>(), "CUDA0 compute");
      expect_compute_close(mib(plan->buffers.main.compute_host),
                           compute.at("CUDA_Host").get<double>(), "CUDA_Host compute");
    } else {
      expect_compute_close(mib(plan->buffers.main.compute_host), compute.at("CPU").get<double>(),
                           "CPU compute");
    }
    if (log.contains("mtp_compute_mib")) {
      double logged = 0;
      for (const auto& [buffer, size] : log.at("mtp_compute_mib").items()) {
        logged += size.get<double>();
      }
      expect_compute_close(mib(plan->buffers.mtp.compute()), logged, "MTP draft compute");
    }
    if (!config.mtp) {
      // The output buffer at start: n_vocab x n_seq_max logits (without drafting the server
      // never asks for more rows).
      EXPECT_NEAR(mib(plan->output_bytes), log.at("output_mib").get<double>(),
                  0.0051);  // two decimals, rounded
    }
  }
}

TEST(ComputeBuffers, WholeProcessAfterLoadIsWithinFivePercentOfThePlan) {
  const json cases = load_compute_cases();
  testing::TempDir dir;
  std::map<std::string, model::ModelFacts> models;
  for (const auto& [name, description] : cases.at("models").items()) {
    models.emplace(name, model_of(description, dir, name));
  }
  int checked = 0;
  for (const auto& c : cases.at("cases")) {
    if (!c.contains("rss_kib")) {
      continue;
    }
    SCOPED_TRACE(c.at("name").get<std::string>() + ": " + c.at("args").get<std::string>());
    PlanConfig config = config_of(c.at("config"));
    config.overhead_bytes = kDefaultOverheadBytes;
    const auto plan = make_plan(models.at(c.at("model").get<std::string>()), config, {});
    ASSERT_TRUE(plan);
    // The host side (RSS anon + file) plus, on a GPU, the device side (NVML per process).
    const double rss = c.at("rss_kib").at("anon").get<double>() +
                       c.at("rss_kib").at("file").get<double>() + 1024.0 * c.value("nvml_mib", 0.0);
    // On a GPU the compute buffers are device allocations NVML counts in full. On the CPU
    // build they are malloc'd and become resident only as batches use them: an idle server
    // holds the plan's figure at load without them (expected_memory.hpp), and the plan's total
    // bounds what it will hold.
    const double planned = static_cast<double>(uncalibrated_memory(*plan, config.backend).at_load +
                                               plan->overhead_bytes) /
                           1024.0;
    // A CUDA server whose warm-up loaded cuBLAS holds more than the figure at load already, up
    // to the plan (the qwen3moe runs here).
    EXPECT_GE(rss, 0.95 * planned)
        << "planned at load " << planned / 1024 << " MiB, measured " << rss / 1024 << " MiB";
    EXPECT_LE(rss, static_cast<double>(plan->total_bytes) / 1024.0);
    ++checked;
  }
  EXPECT_GE(checked, 29);
}

// A real CUDA llama-server on an H200 (tests/fixtures/llama-server/memory/devices.json): full
// and partial offload of llama-2b. The plan's CUDA0 weights equal the server's "CUDA0 model
// buffer" to the logged two decimals, and CUDA0's whole figure is within 5% of NVML's
// per-process memory for the device.
TEST(DevicePlan, EachCapturedRunOnAnH200MatchesNvmlWithinFivePercent) {
  const json cases = load_compute_cases();
  const auto text = read_text_file(testing::fixture("llama-server/memory/devices.json"));
  ASSERT_TRUE(text);
  const json runs = json::parse(*text);
  testing::TempDir dir;
  const model::ModelFacts model = model_of(cases.at("models").at("llama-2b"), dir, "llama-2b");
  PlanBudget budget;
  budget.mem_available = 120ull << 30;
  budget.gpus.push_back({"CUDA0", "NVIDIA H200", runs.at("free_mib").get<std::uint64_t>() << 20,
                         kDefaultGpuReserveBytes});
  ASSERT_EQ(runs.at("runs").size(), 5u);
  for (const json& run : runs.at("runs")) {
    const std::string name = run.at("name");
    PlanConfig config;
    config.ctx_total = run.at("ctx");
    config.slots = run.at("slots");
    config.kv_unified = run.at("kvu");
    config.flash_attention = run.at("fa");
    config.cache_ram_bytes = 0;
    config.overhead_bytes = 0;
    config.backend = PlanBackend::cuda;
    config.gpu_layers = run.at("ngl").get<std::uint32_t>();
    const auto plan = make_plan(model, config, budget);
    ASSERT_TRUE(plan) << plan.error().message;
    ASSERT_TRUE(plan->devices) << name;
    const DevicePart& gpu = plan->devices->gpus.at(0);
    const json& log = run.at("log");
    EXPECT_NEAR(mib(gpu.weights_bytes), log.at("cuda0_model_mib").get<double>(), 0.005) << name;
    // The compute buffers, partial offloads included (the scheduler's split copies; these runs
    // were not used to find that rule).
    EXPECT_NEAR(mib(plan->buffers.main.compute_device), log.at("cuda0_compute_mib").get<double>(),
                0.006)
        << name;
    EXPECT_NEAR(mib(plan->buffers.main.compute_host), log.at("cuda_host_compute_mib").get<double>(),
                0.006)
        << name;
    // CPU_Mapped is the mapped file range from token_embd to the last CPU block, which also
    // spans output.weight (stored second in this file) when that is on the GPU: the plan's
    // mapped_extra_bytes.
    EXPECT_EQ(plan->devices->host.mapped_extra_bytes,
              plan->devices->host.layers.empty() ? 0 : model.output_weight_bytes)
        << name;
    EXPECT_NEAR(mib(plan->devices->host.weights_bytes + plan->devices->host.mapped_extra_bytes),
                log.at("cpu_mapped_mib").get<double>(), 0.005)
        << name;
    // NVML after load: within 5% of the plan less what comes with the first prompts (cuBLAS,
    // the memory pool), never above the plan.
    const double nvml = run.at("nvml_mib").get<double>();
    const double at_load =
        mib(gpu.total_bytes - (plan->runtime.device - plan->runtime.device_at_load));
    EXPECT_NEAR(at_load, nvml, 0.05 * nvml)
        << name << ": planned at load " << at_load << " MiB on CUDA0, NVML " << nvml;
    EXPECT_LE(nvml, mib(gpu.total_bytes)) << name;
    EXPECT_TRUE(plan->devices->fits) << name;
  }
}

TEST(ComputeBuffers, WithoutFlashAttentionTheScoresMatrixGrowsWithTheContext) {
  const json cases = load_compute_cases();
  testing::TempDir dir;
  const model::ModelFacts facts = model_of(cases.at("models").at("llama-2b"), dir, "llama-2b");
  PlanConfig config;
  config.flash_attention = false;
  config.ctx_total = 4096;
  const auto small = make_plan(facts, config, {});
  config.ctx_total = 16384;
  const auto large = make_plan(facts, config, {});
  ASSERT_TRUE(small && large);
  // KQ = n_kv x n_tokens x n_head f32: 12288 more cells x 512 tokens x 16 heads x 4 bytes.
  EXPECT_EQ(large->buffers.main.compute_host - small->buffers.main.compute_host,
            12288ull * 512 * 16 * 4 + 12288ull * 512 * 4);  // + the f32 mask
  EXPECT_EQ(large->buffers.main.peak_phase, "attention scores (KQ)");
}

TEST(ComputeBuffers, ServerOutputsFollowSlotsAndDraftTokens) {
  EXPECT_EQ(server_outputs_max(2048, 1, 0), 1u);
  EXPECT_EQ(server_outputs_max(2048, 3, 4), 15u);
  EXPECT_EQ(server_outputs_max(8, 3, 4), 8u);
}

TEST(BackendChoice, CudaWithACudaBuildAndAGpuTheServerSees) {
  BackendEvidence evidence;
  evidence.server_evidence = "no CUDA library linked";
  EXPECT_EQ(choose_backend(evidence).backend, PlanBackend::cpu);
  evidence.server_has_cuda = true;
  evidence.server_evidence = "libggml-cuda.so beside the binary";
  EXPECT_EQ(choose_backend(evidence).backend, PlanBackend::cpu);  // no GPU on this machine
  EXPECT_NE(choose_backend(evidence).reason.find("no GPU"), std::string::npos);
  evidence.machine_has_gpu = true;
  // -ngl 0 still creates the CUDA backend: the CPU layers' big batches run on the GPU.
  evidence.gpu_layers = 0;
  EXPECT_EQ(choose_backend(evidence).backend, PlanBackend::cuda);
  EXPECT_NE(choose_backend(evidence).reason.find("op offload"), std::string::npos);
  // --device none or an empty CUDA_VISIBLE_DEVICES: no CUDA backend at all.
  evidence.gpus_hidden = true;
  EXPECT_EQ(choose_backend(evidence).backend, PlanBackend::cpu);
  EXPECT_NE(choose_backend(evidence).reason.find("--device none"), std::string::npos);
  evidence.gpus_hidden = false;
  evidence.gpu_layers = 99;
  EXPECT_EQ(choose_backend(evidence).backend, PlanBackend::cuda);
  evidence.gpu_layers.reset();
  const BackendChoice choice = choose_backend(evidence);
  EXPECT_EQ(choice.backend, PlanBackend::cuda);
  EXPECT_NE(choice.reason.find("-ngl auto"), std::string::npos);
}

TEST(BackendChoice, TheGpuIsHiddenByDeviceNoneOrAnEmptyCudaVisibleDevices) {
  EXPECT_FALSE(gpus_hidden({}, std::nullopt));
  EXPECT_FALSE(gpus_hidden({"CUDA1"}, std::string("0,1")));
  EXPECT_TRUE(gpus_hidden({"none"}, std::nullopt));
  EXPECT_TRUE(gpus_hidden({}, std::string("")));
}

TEST(BackendChoice, ACudaBuildIsSeenFromItsFilesWithoutRunningIt) {
  testing::TempDir dir;
  // A CPU build: shared ggml libraries beside the binary, none of them CUDA.
  const auto cpu = dir.write("cpu/bin/llama-server",
                             std::string("\x7f"
                                         "ELF libggml-cpu.so"),
                             true);
  dir.write("cpu/bin/libggml-cpu.so", "x");
  const server::CudaBuildFacts plain = server::detect_cuda_build(cpu.string());
  EXPECT_FALSE(plain.cuda) << plain.evidence;
  // Backends as shared libraries: libggml-cuda.so beside the binary.
  const auto shared = dir.write("cuda/bin/llama-server",
                                "\x7f"
                                "ELF",
                                true);
  dir.write("cuda/bin/libggml-cuda.so", "x");
  const server::CudaBuildFacts beside = server::detect_cuda_build(shared.string());
  EXPECT_TRUE(beside.cuda);
  EXPECT_NE(beside.evidence.find("libggml-cuda.so"), std::string::npos);
  // A static build links the CUDA libraries by name.
  const auto linked = dir.write("static/bin/llama-server",
                                std::string("\x7f"
                                            "ELF\0libcublas.so.12\0",
                                            22),
                                true);
  const server::CudaBuildFacts names = server::detect_cuda_build(linked.string());
  EXPECT_TRUE(names.cuda);
  EXPECT_EQ(names.evidence, "links libcublas");
  EXPECT_FALSE(server::detect_cuda_build((dir.path() / "missing").string()).cuda);
}

TEST(BackendChoice, CudaPlansAddTheRuntimeAndSplitHostAndDeviceBuffers) {
  const json cases = load_compute_cases();
  testing::TempDir dir;
  const model::ModelFacts facts = model_of(cases.at("models").at("llama-2b"), dir, "llama-2b");
  PlanConfig config;
  config.ctx_total = 8192;
  const auto cpu = make_plan(facts, config, {});
  config.backend = PlanBackend::cuda;
  const auto cuda = make_plan(facts, config, {});
  ASSERT_TRUE(cpu && cuda);
  EXPECT_EQ(cpu->runtime.device, 0u);
  EXPECT_EQ(cpu->buffers.main.compute_device, 0u);
  // A dense model's CUDA context after load (K22), and in service with cuBLAS (100 MiB) and
  // the memory pool of its largest product: 512 tokens x its n_ff of 5632 x 4 bytes, + 8 MiB.
  EXPECT_EQ(cuda->runtime.device_at_load, 590ull << 20);
  EXPECT_EQ(cuda->runtime.device, ((590ull + 100 + 8) << 20) + 512ull * 5632 * 4);
  EXPECT_GT(cuda->runtime.host, cpu->runtime.host);
  EXPECT_GT(cuda->buffers.main.compute_device, 0u);
  EXPECT_GT(cuda->buffers.main.compute_host, 0u);
  EXPECT_EQ(cuda->total_bytes - cpu->total_bytes,
            cuda->runtime_bytes - cpu->runtime_bytes + cuda->compute_bytes - cpu->compute_bytes);
}

}  // namespace
}  // namespace gb10tune::plan
