// The projector's part of the plan against what a real llama-server printed for the same mmproj
// header (tests/fixtures/llama-server/mmproj/cases.json: the clip lines of `-lv 4`).
#include "gb10tune/plan/projector_plan.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/util/text_file.hpp"
#include "support/captured_header.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

json load_projector_cases() {
  return testing::fixture_json("llama-server/mmproj/cases.json");
}

// llama.cpp prints MiB with "%.2f"; the plan's bytes printed the same way.
std::string mib2(std::uint64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", static_cast<double>(bytes) / 1048576.0);
  return text;
}

std::string mib2(double logged) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", logged);
  return text;
}

// The mmproj header of a captured model, rebuilt from its metadata and tensor infos.
model::ProjectorFacts projector_of(const json& description, const testing::TempDir& dir,
                                   const std::string& name) {
  testing::GgufWriter w = testing::captured_header(description);
  const auto path = dir.path() / (name + ".gguf");
  w.write(path);
  const auto file = gguf::read_gguf(path);
  EXPECT_TRUE(file) << file.error().message;
  const auto facts = model::describe_projector(*file);
  EXPECT_TRUE(facts) << facts.error().message;
  return facts ? *facts : model::ProjectorFacts{};
}

TEST(ProjectorPlan, EveryCapturedRunMatchesTheClipLines) {
  const json cases = load_projector_cases();
  ASSERT_TRUE(cases.contains("cases"));
  ASSERT_GE(cases.at("cases").size(), 17u);
  testing::TempDir dir;
  std::map<std::string, model::ProjectorFacts> projectors;
  for (const auto& [name, description] : cases.at("models").items()) {
    projectors.emplace(name, projector_of(description, dir, name));
    // Weights to the byte: the sum gguf-py computed for the file that was loaded.
    EXPECT_EQ(projectors.at(name).weight_bytes, description.at("tensor_bytes").get<std::uint64_t>())
        << name;
  }
  for (const auto& c : cases.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name + ": " + c.at("args").get<std::string>());
    const json& log = c.at("log");
    const bool fa = c.at("config").at("flash_attention").get<bool>();
    const bool offload = c.at("config").at("offload").get<bool>();
    // A CPU build: the projector is on the CPU backend whatever --mmproj-offload says.
    const ProjectorPlan plan =
        plan_projector(projectors.at(c.at("model").get<std::string>()), fa, false);
    EXPECT_EQ(log.at("clip_backend").get<std::string>(), "CPU");
    EXPECT_EQ(log.at("flash_attention").get<std::string>(), fa ? "enabled" : "disabled");
    EXPECT_EQ(plan.warmup_side, log.at("warmup_image").get<std::uint32_t>());
    EXPECT_EQ(mib2(plan.weights_bytes), mib2(log.at("model_size_mib").get<double>()));
    ASSERT_EQ(log.at("compute_mib").size(), 1u);
    EXPECT_EQ(mib2(plan.compute_bytes), mib2(log.at("compute_mib").at("CPU").get<double>()))
        << "peak: " << plan.peak_phase << " (offload " << offload << ")";
    // The server's own estimate (model + compute) agrees with the two figures together.
    EXPECT_NEAR(static_cast<double>(plan.bytes()) / 1048576.0,
                log.at("estimated_total_mib").get<double>(), 0.011);
    EXPECT_TRUE(plan.checked);
    EXPECT_FALSE(plan.on_device);
  }
}

model::ProjectorFacts small_projector(std::string type) {
  model::ProjectorFacts p;
  p.projector_type = std::move(type);
  p.has_vision = true;
  p.weight_bytes = 1000;
  p.image_size = 896;
  p.patch_size = 14;
  p.embedding_length = 1152;
  p.feed_forward_length = 4304;
  p.head_count = 16;
  return p;
}

TEST(ProjectorPlan, Gemma3SizedTowerIsDominatedByTheScoresWithoutFlashAttention) {
  const auto p = small_projector("gemma3");
  const ProjectorPlan off = plan_projector(p, false, true);
  EXPECT_EQ(off.patches, 4096u);
  EXPECT_EQ(off.compute_bytes, 4096ull * 4096 * 16 * 4 + 6ull * 1152 * 4096 * 4);
  EXPECT_EQ(off.peak_phase, "attention scores (KQ)");
  EXPECT_TRUE(off.on_device);
  const ProjectorPlan on = plan_projector(p, true, true);
  EXPECT_EQ(on.compute_bytes, (3ull * 1152 + 4304) * 4096 * 4);
  EXPECT_EQ(on.peak_phase, "MLP");
}

TEST(ProjectorPlan, Bf16PatchEmbeddingMakesAnF32Im2col) {
  auto p = small_projector("gemma3");
  p.embedding_length = 16;
  p.feed_forward_length = 16;
  p.head_count = 1;
  const ProjectorPlan f16 = plan_projector(p, true, false);
  p.patch_embd_type = gguf::GgmlType::bf16;
  const ProjectorPlan bf16 = plan_projector(p, true, false);
  EXPECT_EQ(f16.peak_phase, "patch embedding (image + im2col)");
  EXPECT_EQ(f16.compute_bytes, 3ull * 896 * 896 * 4 + 3ull * 14 * 14 * 4096 * 2);
  EXPECT_EQ(bf16.compute_bytes, 3ull * 896 * 896 * 4 + 3ull * 14 * 14 * 4096 * 4);
}

TEST(ProjectorPlan, UncheckedTypesAndAudioEncodersSaySo) {
  const ProjectorPlan other = plan_projector(small_projector("qwen3vl_merger"), true, false);
  EXPECT_FALSE(other.checked);
  EXPECT_NE(other.basis.find("estimated"), std::string::npos);
  model::ProjectorFacts audio;
  audio.has_audio = true;
  audio.weight_bytes = 5;
  const ProjectorPlan a = plan_projector(audio, true, false);
  EXPECT_EQ(a.compute_bytes, 0u);
  EXPECT_EQ(a.weights_bytes, 5u);
  EXPECT_NE(a.basis.find("not modelled"), std::string::npos);
}

TEST(ProjectorPlan, TheMemoryPlanCountsItOnTheGpuUnlessOffloadIsOff) {
  const auto model = testing::describe(testing::tiny_qwen35_model(false));
  ASSERT_TRUE(model) << model.error().message;
  PlanConfig config;
  config.ctx_total = 4096;
  config.backend = PlanBackend::cuda;
  const auto without = make_plan(*model, config, {});
  ASSERT_TRUE(without);
  config.projector = small_projector("gemma3");
  const auto with = make_plan(*model, config, {});
  ASSERT_TRUE(with) << with.error().message;
  ASSERT_TRUE(with->projector);
  EXPECT_TRUE(with->projector->on_device);
  EXPECT_EQ(with->projector_bytes, 1000u);
  // On the GPU the graph's buffer is there and the f32 input image in clip's CPU buffer.
  const std::uint64_t image =
      3ull * with->projector->warmup_side * with->projector->warmup_side * 4;
  EXPECT_GT(image, 0u);
  EXPECT_EQ(with->projector->host_compute_bytes, image);
  EXPECT_EQ(with->projector_compute_bytes, with->projector->compute_bytes + image);
  EXPECT_EQ(with->load_bytes(),
            without->load_bytes() + 1000u + with->projector->compute_bytes + image);
  EXPECT_EQ(with->total_bytes,
            without->total_bytes + 1000u + with->projector->compute_bytes + image);
  config.projector_offload = false;
  const auto on_cpu = make_plan(*model, config, {});
  ASSERT_TRUE(on_cpu);
  EXPECT_FALSE(on_cpu->projector->on_device);
  EXPECT_EQ(on_cpu->projector->host_compute_bytes, 0u);  // the image is in the one buffer
  EXPECT_EQ(on_cpu->projector_compute_bytes, on_cpu->projector->compute_bytes);
  config.projector_offload = true;
  config.backend = PlanBackend::cpu;
  const auto cpu_build = make_plan(*model, config, {});
  ASSERT_TRUE(cpu_build);
  EXPECT_FALSE(cpu_build->projector->on_device);
  config.projector = small_projector("pixtral");
  const auto unchecked = make_plan(*model, config, {});
  ASSERT_TRUE(unchecked);
  bool noted = false;
  for (const auto& note : unchecked->notes) {
    noted = noted || note.find("mmproj compute buffer: estimated") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace gb10tune::plan
