// Architecture coverage: the layer rules of every architecture beyond the first nine, checked
// against what a real llama-server printed for a tiny random-weight model of it
// (tests/fixtures/llama-server/memory/architectures.json, written by capture_arch.py from the
// models of tests/fixtures/gguf/write_tiny_arch.py), and the refusal of unknown ones.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/util/text_file.hpp"
#include "support/captured_header.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using gguf::GgmlType;
using model::KvScope;
using model::ModelFacts;
using nlohmann::json;
using testing::gguf_string;
using testing::gguf_uint32;
using testing::GgufWriter;

using testing::kBytesPerMiB;

json load_fixture() {
  const auto text = read_text_file(testing::fixture("llama-server/memory/architectures.json"));
  EXPECT_TRUE(text) << "cannot read the architecture fixture";
  return text ? json::parse(*text) : json::object();
}

// The captured model's header, rebuilt from its metadata and tensor infos.
GgufWriter header_of(const json& description) {
  return testing::captured_header(description);
}

// f16 bytes of K (or V) of one cache: the widths of its layers × cells × streams × 2.
std::uint64_t cache_bytes(const ModelFacts& facts, KvScope scope, bool v, bool v_transposed,
                          std::uint64_t cells, std::uint64_t streams) {
  std::uint64_t width = 0;
  for (const model::LayerFacts& layer : facts.layers) {
    const bool in = scope == KvScope::sliding_window ? layer.main_kv && layer.sliding_window
                                                     : layer.main_kv && !layer.sliding_window;
    if (in) {
      width += !v ? layer.k_width : (v_transposed ? facts.v_width_max : layer.v_width);
    }
  }
  return width * cells * streams * 2;
}

// llama.cpp prints MiB with two decimals: `bytes` must round to `logged`.
void expect_rounds_to(std::uint64_t bytes, double logged, const std::string& what) {
  EXPECT_LE(std::abs(static_cast<double>(bytes) / kBytesPerMiB - logged), 0.005 + 1e-9)
      << what << ": planned " << bytes << " bytes (" << static_cast<double>(bytes) / kBytesPerMiB
      << " MiB), llama-server " << logged << " MiB";
}

TEST(ArchitectureCoverage, EveryCapturedArchitectureMatchesTheServersCachesToTheByte) {
  const json fixture = load_fixture();
  ASSERT_TRUE(fixture.contains("cases"));
  ASSERT_TRUE(fixture.contains("build"));
  testing::TempDir dir;
  std::map<std::string, ModelFacts> models;
  for (const auto& [name, description] : fixture.at("models").items()) {
    const auto facts = testing::describe(header_of(description), name + ".gguf");
    ASSERT_TRUE(facts) << name << ": " << facts.error().message;
    ASSERT_TRUE(facts->supported) << name << ": " << facts->unsupported_reason;
    models.emplace(name, *facts);
  }
  // The architectures the fixture must cover (each with every setting of capture_arch.py).
  for (const char* arch : {"glm4moe", "mistral3", "seed_oss", "qwen3vl", "qwen3vlmoe", "minimax-m2",
                           "llama4", "deepseek2"}) {
    EXPECT_TRUE(models.count(arch)) << arch << " is not in the fixture";
  }
  std::map<std::string, int> cases_per_model;
  for (const auto& c : fixture.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name + ": " + c.at("args").get<std::string>());
    const ModelFacts& facts = models.at(c.at("model").get<std::string>());
    ++cases_per_model[facts.architecture];
    const json& cfg = c.at("config");
    PlanConfig config;
    config.ctx_total = cfg.at("ctx").get<std::uint64_t>();
    config.slots = cfg.at("slots").get<std::uint32_t>();
    config.kv_unified = cfg.at("kvu").get<bool>();
    config.flash_attention = cfg.at("fa").get<bool>();
    config.ubatch = cfg.at("ubatch").get<std::uint32_t>();
    config.cache_ram_bytes = 0;
    config.overhead_bytes = 0;
    const auto plan = make_plan(facts, config, {});
    ASSERT_TRUE(plan) << plan.error().message;

    // llama_kv_cache_iswa makes the full cache first, then the SWA one.
    const json& caches = c.at("log").at("kv");
    const bool swa = facts.kv_layer_count(KvScope::sliding_window) > 0;
    ASSERT_EQ(caches.size(), swa ? 2u : 1u);
    const bool v_transposed = !config.flash_attention;
    for (std::size_t i = 0; i < caches.size(); ++i) {
      const json& cache = caches.at(i);
      const KvScope scope = i == 0 ? KvScope::full_attention : KvScope::sliding_window;
      const std::uint64_t cells = i == 0 ? plan->full_cells : plan->swa_cells;
      EXPECT_EQ(cache.at("cells").get<std::uint64_t>(), cells);
      EXPECT_EQ(cache.at("streams").get<std::uint64_t>(), plan->streams);
      EXPECT_EQ(cache.at("layers").get<std::uint32_t>(), facts.kv_layer_count(scope));
      // With at least 8192 cells over all streams, one f16 value more or less per token is
      // 16 KiB, more than the 10 KiB a two-decimal MiB figure leaves open: K and V bytes
      // that round to the logged figures are the server's to the byte.
      ASSERT_GE(cells * plan->streams, 8192u);
      const std::uint64_t k = cache_bytes(facts, scope, false, v_transposed, cells, plan->streams);
      const std::uint64_t v = cache_bytes(facts, scope, true, v_transposed, cells, plan->streams);
      expect_rounds_to(k, cache.at("k_mib").get<double>(), "K");
      expect_rounds_to(v, cache.at("v_mib").get<double>(), "V");
      expect_rounds_to(k + v, cache.at("buffer_mib").get<double>(), "KV buffer");
      EXPECT_EQ(k + v, i == 0 ? plan->kv_full_bytes : plan->kv_swa_bytes);
    }
    EXPECT_FALSE(c.at("log").contains("recurrent_mib"));
    EXPECT_EQ(plan->recurrent_bytes, 0u);
    // Compute: within the plan's promise (10% or 16 MiB); output: n_vocab × slots logits.
    const double compute = c.at("log").at("compute_mib").at("CPU").get<double>();
    EXPECT_NEAR(static_cast<double>(plan->buffers.main.compute_host) / kBytesPerMiB, compute,
                std::max(0.10 * compute, 16.0));
    expect_rounds_to(plan->output_bytes, c.at("log").at("output_mib").get<double>(), "output");
  }
  for (const auto& [arch, count] : cases_per_model) {
    EXPECT_GE(count, 7) << arch;
  }
}

TEST(ArchitectureCoverage, MlaCachesTheLatentAsKAndNoV) {
  const json fixture = load_fixture();
  const auto facts = testing::describe(header_of(fixture.at("models").at("deepseek2")));
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_TRUE(facts->mla);
  // kv_lora_rank 32 + 16 RoPE dims, one KV head; no V.
  for (const model::LayerFacts& layer : facts->layers) {
    EXPECT_EQ(layer.k_width, 48u);
    EXPECT_EQ(layer.v_width, 0u);
  }
  const auto per_cell =
      facts->kv_bytes_per_cell(KvScope::full_attention, GgmlType::f16, GgmlType::f16, true);
  ASSERT_TRUE(per_cell);
  EXPECT_EQ(*per_cell, 3u * 48 * 2);
}

TEST(ArchitectureCoverage, DeepseekWithoutMlaKeysCachesKAndVLikePlainAttention) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("deepseek2"))
      .add("deepseek2.context_length", gguf_uint32(4096))
      .add("deepseek2.embedding_length", gguf_uint32(64))
      .add("deepseek2.block_count", gguf_uint32(2))
      .add("deepseek2.attention.head_count", gguf_uint32(4))
      .add("deepseek2.attention.key_length", gguf_uint32(48))
      .add("deepseek2.attention.value_length", gguf_uint32(32));
  auto facts = testing::describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_FALSE(facts->mla);
  EXPECT_EQ(facts->layers[0].k_width, 4u * 48);
  EXPECT_EQ(facts->layers[0].v_width, 4u * 32);
  // One of the two MLA keys alone: llama.cpp asserts; so does the plan, naming the key.
  w.add("deepseek2.attention.key_length_mla", gguf_uint32(48));
  facts = testing::describe(w);
  ASSERT_FALSE(facts);
  EXPECT_NE(facts.error().message.find(
                "key 'deepseek2.attention.key_length_mla' is set without its partner"),
            std::string::npos)
      << facts.error().message;
}

TEST(ArchitectureCoverage, Llama4ChunksAreFixedAt8192AndAZeroWindowTurnsThemOff) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("llama4"))
      .add("llama4.context_length", gguf_uint32(4096))
      .add("llama4.embedding_length", gguf_uint32(64))
      .add("llama4.block_count", gguf_uint32(8))
      .add("llama4.attention.head_count", gguf_uint32(4))
      .add("llama4.attention.head_count_kv", gguf_uint32(2));
  auto facts = testing::describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->sliding_window, 8192u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 6u);  // 3 of every 4
  EXPECT_FALSE(facts->layers[3].sliding_window);
  EXPECT_FALSE(facts->layers[7].sliding_window);
  w.add("llama4.attention.sliding_window", gguf_uint32(0));
  facts = testing::describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->sliding_window, 0u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 0u);
}

TEST(ArchitectureCoverage, PerLayerKvHeadsComeFromTheArray) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("minimax-m2"))
      .add("minimax-m2.context_length", gguf_uint32(4096))
      .add("minimax-m2.embedding_length", gguf_uint32(64))
      .add("minimax-m2.block_count", gguf_uint32(3))
      .add("minimax-m2.attention.head_count", gguf_uint32(4))
      .add("minimax-m2.attention.head_count_kv", testing::gguf_uint32_array({2, 1, 4}))
      .add("minimax-m2.attention.key_length", gguf_uint32(32))
      .add("minimax-m2.attention.value_length", gguf_uint32(32));
  const auto facts = testing::describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->layers[0].k_width, 64u);
  EXPECT_EQ(facts->layers[1].k_width, 32u);
  EXPECT_EQ(facts->layers[2].v_width, 128u);
  EXPECT_EQ(facts->v_width_max, 128u);
}

// An architecture without rules is refused fast, by name, with the closest family named, and
// never planned as llama.
TEST(ArchitectureCoverage, UnknownArchitectureIsRefusedFastNamingTheNearestFamily) {
  const std::map<std::string, std::string> nearest{
      {"qwen2moe", "qwen2"}, {"deepseek3", "deepseek2"}, {"gemma3n", "gemma3"},
      {"glm4", "glm4moe"},   {"llama-embed", "llama"},   {"mistral4", "mistral3"}};
  for (const auto& [arch, family] : nearest) {
    SCOPED_TRACE(arch);
    GgufWriter w;
    w.add("general.architecture", gguf_string(arch))
        .add(arch + ".context_length", gguf_uint32(4096))
        .add(arch + ".embedding_length", gguf_uint32(64))
        .add(arch + ".block_count", gguf_uint32(2))
        .add(arch + ".attention.head_count", gguf_uint32(4))
        .tensor("token_embd.weight", {64, 100}, GgmlType::f16);
    testing::TempDir dir;
    const auto path = dir.path() / "model.gguf";
    w.write(path);
    const auto start = std::chrono::steady_clock::now();
    const auto file = gguf::read_gguf(path);
    ASSERT_TRUE(file);
    const auto facts = model::describe_model(*file);
    ASSERT_TRUE(facts);
    PlanConfig config;
    config.ctx_total = 4096;
    const auto plan = make_plan(*facts, config, {});
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_LT(elapsed, std::chrono::milliseconds(50));
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, ExitCode::usage);
    const std::string& message = plan.error().message;
    EXPECT_NE(message.find("architecture '" + arch + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("nearest supported: " + family + ";"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace gb10tune::plan
