// Architecture coverage: the layer rules of every architecture beyond the first nine, checked
// against what a real llama-server printed for a tiny random-weight model of it
// (tests/fixtures/llama-server/memory/architectures.json, written by capture_arch.py from the
// models of tests/fixtures/gguf/write_tiny_arch.py), and the refusal of unknown ones.
#include <gtest/gtest.h>

#include <array>
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

// The architectures the fixture must cover, each with every setting of capture_arch.py.
constexpr std::array kCapturedArchitectures{
    // Named in the issue.
    "glm4moe", "mistral3", "seed_oss", "qwen3vl", "qwen3vlmoe", "minimax-m2", "llama4", "deepseek2",
    "gemma3n", "gemma4", "nemotron_h", "nemotron_h_moe", "granitehybrid",
    // A sample of the sweep's plain-attention and sliding-window architectures.
    "qwen2moe", "olmo", "olmoe", "starcoder2", "internlm2", "granite", "granitemoe", "smollm3",
    "exaone", "ernie4_5", "command-r", "gemma", "stablelm", "orion", "arcee", "glm4", "qwen2vl",
    "deci", "starcoder", "xverse", "gemma2", "cohere2", "olmo2"};

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
  for (const char* arch : kCapturedArchitectures) {
    EXPECT_TRUE(models.count(arch)) << arch << " is not in the fixture";
  }
  std::map<std::string, int> cases_per_model;
  for (const auto& c : fixture.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name + ": " + c.at("args").get<std::string>());
    const ModelFacts& facts = models.at(c.at("model").get<std::string>());
    ++cases_per_model[facts.architecture];
    const json& cfg = c.at("config");
    const PlanConfig config = testing::captured_plan_config(cfg);
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
    // Recurrent state (hybrid Mamba-2): one f32 row of n_embd_r and one of n_embd_s per
    // recurrent layer and sequence. The log gives two decimals of MiB; the tiny models' SSM
    // sizes are chosen so that a wrong conv width, state size, layer or row count moves it.
    const json& log = c.at("log");
    if (facts.recurrent_layer_count == 0) {
      EXPECT_FALSE(log.contains("recurrent_mib"));
      EXPECT_EQ(plan->recurrent_bytes, 0u);
    } else {
      ASSERT_TRUE(log.contains("recurrent")) << "no recurrent state captured";
      const json& rs = log.at("recurrent");
      // The line counts n_layer(), every main block, whether the filter kept it or not.
      EXPECT_EQ(rs.at("layers").get<std::uint32_t>(), facts.main_layer_count);
      EXPECT_EQ(rs.at("cells").get<std::uint64_t>(), plan->recurrent_rows);
      const std::uint64_t rows = plan->recurrent_rows * facts.recurrent_layer_count;
      expect_rounds_to(facts.conv_state_width * 4 * rows, rs.at("r_mib").get<double>(), "R");
      expect_rounds_to(facts.ssm_state_width * 4 * rows, rs.at("s_mib").get<double>(), "S");
      expect_rounds_to(plan->recurrent_bytes, log.at("recurrent_mib").get<double>(), "RS buffer");
    }
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

// glm4moe's nextn block: llama.cpp creates its tensors with TENSOR_SKIP, so they are in no
// buffer (the CUDA captures check CUDA0's weights to the logged MiB), yet the block keeps KV.
TEST(ArchitectureCoverage, Glm4moeNextnBlockKeepsKvButItsWeightsAreNotLoaded) {
  const json fixture = load_fixture();
  const json& description = fixture.at("models").at("glm4moe");
  const auto facts = testing::describe(header_of(description));
  ASSERT_TRUE(facts) << facts.error().message;
  ASSERT_EQ(facts->block_count, 4u);
  EXPECT_EQ(facts->unloaded_block_count, 1u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 4u);
  // The captured header's blk.3.* tensors, summed here from the fixture's own tensor list.
  std::uint64_t last_block = 0;
  std::uint64_t others = 0;
  for (const model::ModelFacts::TensorSpan& span : facts->tensor_spans) {
    (span.layer == model::ModelFacts::kUnloaded ? last_block : others) += span.bytes;
  }
  std::size_t named = 0;
  for (const auto& tensor : description.at("tensors")) {
    named += tensor.at(0).get<std::string>().starts_with("blk.3.") ? 1 : 0;
  }
  EXPECT_GT(named, 10u);
  EXPECT_GT(last_block, 0u);
  EXPECT_EQ(facts->unloaded_weight_bytes, last_block);
  EXPECT_EQ(facts->layer_weight_bytes.at(3), 0u);
  EXPECT_EQ(facts->weight_bytes, last_block + others);
  EXPECT_LT(facts->bytes_read_per_token, others);
  PlanConfig config;
  config.ctx_total = 8192;
  config.cache_ram_bytes = 0;
  config.overhead_bytes = 0;
  const auto plan = make_plan(*facts, config, {});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->weights_bytes, others);
  config.mtp = true;
  const auto mtp = make_plan(*facts, config, {});
  ASSERT_FALSE(mtp);
  EXPECT_NE(mtp.error().message.find("1 nextn block is not loaded by llama.cpp"), std::string::npos)
      << mtp.error().message;
  // A nextn count llama.cpp asserts on is an error naming the key.
  json corrupt = description;
  corrupt.at("metadata").at("glm4moe.nextn_predict_layers") = json{{"uint32", 4}};
  const auto refused = testing::describe(header_of(corrupt));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("nextn_predict_layers"), std::string::npos)
      << refused.error().message;
}

// The input layer (llama-arch.cpp: LLM_TENSOR_LAYER_INPUT) stays in host memory whatever
// -ngl says: starcoder's learned positions and gemma3n's per-layer token embeddings with the
// token embeddings. They are row lookups, not read whole per token.
TEST(ArchitectureCoverage, InputLayerTensorsStayOnTheHostAndAreLookups) {
  const json fixture = load_fixture();
  const std::map<std::string, std::vector<std::string>> input{
      {"starcoder", {"token_embd.weight", "position_embd.weight"}},
      {"gemma3n", {"token_embd.weight", "per_layer_token_embd.weight"}}};
  for (const auto& [arch, names] : input) {
    SCOPED_TRACE(arch);
    const json& description = fixture.at("models").at(arch);
    const auto facts = testing::describe(header_of(description));
    ASSERT_TRUE(facts) << facts.error().message;
    std::uint64_t expected = 0;
    for (const auto& tensor : description.at("tensors")) {
      if (std::find(names.begin(), names.end(), tensor.at(0).get<std::string>()) != names.end()) {
        std::uint64_t elements = 1;
        for (const auto& n : tensor.at(1)) {
          elements *= n.get<std::uint64_t>();
        }
        expected += elements * 4;  // f32
      }
    }
    EXPECT_GT(expected, facts->token_embedding_bytes);
    EXPECT_EQ(facts->input_weight_bytes, expected);
    PlanConfig config;
    config.ctx_total = 8192;
    config.backend = PlanBackend::cuda;
    config.gpu_layers = 99;
    PlanBudget one_gpu;
    one_gpu.mem_available = 64ull << 30;
    one_gpu.gpus.push_back({"CUDA0", "a 24 GB card", 24ull << 30, kDefaultGpuReserveBytes});
    const auto plan = make_plan(*facts, config, one_gpu);
    ASSERT_TRUE(plan) << plan.error().message;
    ASSERT_TRUE(plan->devices);
    EXPECT_EQ(plan->devices->host.weights_bytes, expected);
    // Tied output: the LM head reads token_embd whole; the other lookups read one row.
    ASSERT_TRUE(facts->tied_output);
    EXPECT_EQ(facts->bytes_read_per_token, facts->weight_bytes -
                                               (expected - facts->token_embedding_bytes) -
                                               facts->unloaded_weight_bytes);
  }
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

// Every architecture of llama.cpp 3f545be (src/llama-arch.cpp, LLM_ARCH_NAMES, clip aside):
// launch plans it or refuses it with the reason, never as an architecture it does not know.
TEST(ArchitectureCoverage, EveryLlamaCppArchitectureIsPlannedOrRefusedWithItsReason) {
  constexpr std::array kLlamaCppArchitectures{
      "llama",
      "llama4",
      "deci",
      "falcon",
      "grok",
      "gpt2",
      "gptj",
      "gptneox",
      "mpt",
      "baichuan",
      "starcoder",
      "refact",
      "bert",
      "modern-bert",
      "nomic-bert",
      "nomic-bert-moe",
      "neo-bert",
      "jina-bert-v2",
      "jina-bert-v3",
      "eurobert",
      "bloom",
      "stablelm",
      "qwen",
      "qwen2",
      "qwen2moe",
      "qwen2vl",
      "qwen3",
      "qwen3moe",
      "qwen3next",
      "qwen3vl",
      "qwen3vlmoe",
      "qwen35",
      "qwen35moe",
      "phi2",
      "phi3",
      "phimoe",
      "plamo",
      "plamo2",
      "plamo3",
      "codeshell",
      "orion",
      "internlm2",
      "minicpm",
      "minicpm3",
      "gemma",
      "gemma2",
      "gemma3",
      "gemma3n",
      "gemma4",
      "gemma4-assistant",
      "gemma-embedding",
      "starcoder2",
      "mamba",
      "mamba2",
      "jamba",
      "falcon-h1",
      "xverse",
      "command-r",
      "cohere2",
      "cohere2moe",
      "dbrx",
      "olmo",
      "olmo2",
      "olmoe",
      "muse-glimmer",
      "openelm",
      "arctic",
      "deepseek",
      "deepseek2",
      "deepseek2-ocr",
      "deepseek32",
      "deepseek4",
      "chatglm",
      "glm4",
      "glm4moe",
      "glm-dsa",
      "bitnet",
      "t5",
      "t5encoder",
      "jais",
      "jais2",
      "nemotron",
      "nemotron_h",
      "nemotron_h_moe",
      "exaone",
      "exaone4",
      "exaone-moe",
      "rwkv6",
      "rwkv6qwen2",
      "rwkv7",
      "arwkv7",
      "granite",
      "granitemoe",
      "granitehybrid",
      "graniteswitch",
      "granite_swa",
      "chameleon",
      "wavtokenizer-dec",
      "plm",
      "bailingmoe",
      "bailingmoe2",
      "bailingmoe3",
      "dots1",
      "dots3note",
      "arcee",
      "afmoe",
      "laguna",
      "ernie4_5",
      "ernie4_5-moe",
      "hunyuan-moe",
      "hunyuan-dense",
      "hunyuan_vl",
      "hy_v3",
      "smollm3",
      "gpt-oss",
      "lfm2",
      "lfm2moe",
      "dream",
      "smallthinker",
      "llada",
      "llada-moe",
      "seed_oss",
      "grovemoe",
      "apertus",
      "minimax-01",
      "minimax-m2",
      "minimax-m3",
      "cogvlm",
      "rnd1",
      "pangu-embedded",
      "mistral3",
      "eagle3",
      "dflash",
      "mistral4",
      "paddleocr",
      "mimo2",
      "step35",
      "llama-embed",
      "maincoder",
      "kimi-linear",
      "kimi-k3",
      "talkie",
      "mellum",
      "nanbeige",
      "qwen3tts",
      "pockettts",
  };
  int supported = 0;
  for (const char* arch : kLlamaCppArchitectures) {
    SCOPED_TRACE(arch);
    GgufWriter w;
    w.add("general.architecture", gguf_string(arch));
    const auto facts = testing::describe(w);
    if (!facts) {
      ++supported;  // planned, but this empty header lacks the keys its rules require
      continue;
    }
    if (facts->supported) {
      ++supported;
      continue;
    }
    const std::string& why = facts->unsupported_reason;
    EXPECT_NE(why.find("architecture '" + std::string(arch) + "' is not supported: "),
              std::string::npos)
        << why;
    EXPECT_EQ(why.find("nor one llama.cpp"), std::string::npos) << why;
  }
  EXPECT_GE(supported, 80);
}

TEST(ArchitectureCoverage, AnArchitectureLlamaCppDoesNotKnowIsSaidToBeUnknown) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("qwen9"));
  const auto facts = testing::describe(w);
  ASSERT_TRUE(facts);
  EXPECT_FALSE(facts->supported);
  EXPECT_NE(facts->unsupported_reason.find("nor one llama.cpp 3f545be implements"),
            std::string::npos)
      << facts->unsupported_reason;
}

TEST(ArchitectureCoverage, RecurrentOnlyAndEncoderModelsAreRefusedWithTheReason) {
  for (const auto& [arch, reason] : std::map<std::string, std::string>{{"rwkv7", "recurrent only"},
                                                                       {"mamba2", "recurrent only"},
                                                                       {"t5", "encoder-decoder"},
                                                                       {"bert", "no KV cache"},
                                                                       {"jamba", "hybrid"},
                                                                       {"dream", "diffusion"}}) {
    SCOPED_TRACE(arch);
    GgufWriter w;
    w.add("general.architecture", gguf_string(arch));
    const auto facts = testing::describe(w);
    ASSERT_TRUE(facts);
    EXPECT_FALSE(facts->supported);
    EXPECT_NE(facts->unsupported_reason.find(reason), std::string::npos)
        << facts->unsupported_reason;
  }
  // A recurrent-only Mamba points at the supported family with Mamba-2 layers, not at the
  // closest name.
  GgufWriter w;
  w.add("general.architecture", gguf_string("mamba2"));
  const auto facts = testing::describe(w);
  ASSERT_TRUE(facts);
  EXPECT_NE(facts->unsupported_reason.find("nearest supported: granitehybrid;"), std::string::npos)
      << facts->unsupported_reason;
}

// Gemma 4: per-layer SWA flags, SWA head size 16 with 4 KV heads, full head size 32 with 1;
// shared_kv_layers 3 leaves the last three layers without a cache of their own.
TEST(ArchitectureCoverage, Gemma4SharedLayersHoldNoKvAndSwaFlagsComeFromTheArray) {
  const json fixture = load_fixture();
  const auto facts = testing::describe(header_of(fixture.at("models").at("gemma4")));
  ASSERT_TRUE(facts) << facts.error().message;
  const std::vector<bool> swa{true, false, true, true, false, true, true, false};
  ASSERT_EQ(facts->layers.size(), swa.size());
  for (const model::LayerFacts& layer : facts->layers) {
    SCOPED_TRACE(layer.index);
    EXPECT_EQ(layer.sliding_window, swa[layer.index]);
    EXPECT_EQ(layer.main_kv, layer.index < 5);
    EXPECT_EQ(layer.kv_shared, layer.index >= 5);
    EXPECT_EQ(layer.k_width, swa[layer.index] ? 64u : 32u);
  }
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 2u);  // layers 1, 4
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 3u);  // layers 0, 2, 3
}

TEST(ArchitectureCoverage, Gemma3nKeepsKvInTheFirstTwentyLayersOnly) {
  const json fixture = load_fixture();
  const auto facts = testing::describe(header_of(fixture.at("models").at("gemma3n")));
  ASSERT_TRUE(facts) << facts.error().message;
  ASSERT_EQ(facts->layers.size(), 25u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 4u);  // 4, 9, 14, 19
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 16u);
  for (std::uint32_t il = 20; il < 25; ++il) {
    EXPECT_TRUE(facts->layers[il].kv_shared) << il;
    EXPECT_FALSE(facts->layers[il].main_kv) << il;
  }
  EXPECT_FALSE(facts->layers[24].sliding_window);  // period 5: every 5th layer is full
}

TEST(ArchitectureCoverage, Gemma4WithTooManySharedLayersOrTheWrongReuseOrderIsCorrupt) {
  const auto header = [](std::uint32_t shared, const std::vector<bool>& swa) {
    GgufWriter w;
    w.add("general.architecture", gguf_string("gemma4"))
        .add("gemma4.context_length", gguf_uint32(4096))
        .add("gemma4.embedding_length", gguf_uint32(64))
        .add("gemma4.block_count", gguf_uint32(4))
        .add("gemma4.attention.head_count", gguf_uint32(4))
        .add("gemma4.attention.sliding_window", gguf_uint32(512))
        .add("gemma4.attention.sliding_window_pattern", testing::gguf_bool_array(swa))
        .add("gemma4.attention.key_length_swa", gguf_uint32(16))
        .add("gemma4.attention.value_length_swa", gguf_uint32(16))
        .add("gemma4.attention.shared_kv_layers", gguf_uint32(shared));
    return w;
  };
  auto facts = testing::describe(header(3, {true, false, true, false}));
  ASSERT_FALSE(facts);
  EXPECT_NE(facts.error().message.find("gemma4.attention.shared_kv_layers"), std::string::npos)
      << facts.error().message;
  // One shared layer, a full one, but the last layer with KV (2) is SWA: llama.cpp asserts.
  facts = testing::describe(header(1, {true, false, true, false}));
  ASSERT_FALSE(facts);
  EXPECT_NE(facts.error().message.find("makes shared layer 3 (full) reuse layer 2"),
            std::string::npos)
      << facts.error().message;
  facts = testing::describe(header(1, {true, true, false, false}));
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_TRUE(facts->layers[3].kv_shared);
}

// The sliding-window rules of the sweep (their load_arch_hparams): gemma2 defaults the window
// to 4096 with period 2; afmoe (and olmo2, plamo3) only with a window > 0; cohere2 requires it.
TEST(ArchitectureCoverage, SweepSlidingWindowDefaultsFollowEachLoader) {
  const auto header = [](const std::string& arch) {
    GgufWriter w;
    w.add("general.architecture", gguf_string(arch))
        .add(arch + ".context_length", gguf_uint32(4096))
        .add(arch + ".embedding_length", gguf_uint32(64))
        .add(arch + ".block_count", gguf_uint32(8))
        .add(arch + ".attention.head_count", gguf_uint32(4));
    return w;
  };
  auto facts = testing::describe(header("gemma2"));
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->sliding_window, 4096u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 4u);  // 0, 2, 4, 6
  EXPECT_FALSE(facts->layers[1].sliding_window);

  facts = testing::describe(header("afmoe"));
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 0u);
  facts =
      testing::describe(header("afmoe").add("afmoe.attention.sliding_window", gguf_uint32(1024)));
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 6u);  // 3 of every 4
  facts =
      testing::describe(header("plamo3").add("plamo3.attention.sliding_window", gguf_uint32(1024)));
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 7u);  // 7 of every 8

  facts = testing::describe(header("cohere2"));
  ASSERT_FALSE(facts);
  EXPECT_NE(facts.error().message.find("cohere2.attention.sliding_window"), std::string::npos)
      << facts.error().message;
}

// nemotron_h: Mamba-2 blocks (head_count_kv 0, feed_forward_length 0) keep recurrent state,
// attention blocks (feed_forward_length 0) KV, MLP-only blocks neither.
TEST(ArchitectureCoverage, NemotronHTellsMambaAttentionAndMlpBlocksApart) {
  const json fixture = load_fixture();
  const auto facts = testing::describe(header_of(fixture.at("models").at("nemotron_h")));
  ASSERT_TRUE(facts) << facts.error().message;
  const std::string kinds = "M-*M-M";
  ASSERT_EQ(facts->layers.size(), kinds.size());
  for (const model::LayerFacts& layer : facts->layers) {
    SCOPED_TRACE(layer.index);
    EXPECT_EQ(layer.recurrent, kinds[layer.index] == 'M');
    EXPECT_EQ(layer.main_kv, kinds[layer.index] == '*');
  }
  EXPECT_EQ(facts->recurrent_layer_count, 3u);
  EXPECT_TRUE(facts->recurrent_rollback);
  // n_embd_r = (d_conv - 1) × (d_inner + 2 × n_group × d_state), n_embd_s = d_state × d_inner.
  EXPECT_EQ(facts->conv_state_width, 3u * (256 + 2 * 2 * 128));
  EXPECT_EQ(facts->ssm_state_width, 128u * 256);
}

TEST(ArchitectureCoverage, NemotronHWithMtpBlocksIsNotGuessed) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("nemotron_h"))
      .add("nemotron_h.context_length", gguf_uint32(4096))
      .add("nemotron_h.embedding_length", gguf_uint32(64))
      .add("nemotron_h.block_count", gguf_uint32(3))
      .add("nemotron_h.attention.head_count", gguf_uint32(4))
      .add("nemotron_h.attention.head_count_kv", testing::gguf_uint32_array({0, 2, 2}))
      .add("nemotron_h.ssm.conv_kernel", gguf_uint32(4))
      .add("nemotron_h.ssm.inner_size", gguf_uint32(128))
      .add("nemotron_h.ssm.state_size", gguf_uint32(16))
      .add("nemotron_h.ssm.time_step_rank", gguf_uint32(8))
      .add("nemotron_h.ssm.group_count", gguf_uint32(2))
      .add("nemotron_h.nextn_predict_layers", gguf_uint32(1));
  const auto facts = testing::describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_FALSE(facts->supported);
  EXPECT_NE(facts->unsupported_reason.find("with MTP blocks"), std::string::npos)
      << facts->unsupported_reason;
}

// An architecture without rules is refused fast, by name, with the closest family named, and
// never planned as llama.
TEST(ArchitectureCoverage, UnknownArchitectureIsRefusedNamingTheNearestFamily) {
  const std::map<std::string, std::string> nearest{
      {"qwen4moe", "qwen3moe"}, {"deepseek3", "deepseek2"}, {"gemma5", "gemma3"},
      {"glm5moe", "glm4moe"},   {"llama-embed", "llama"},   {"mistral5", "mistral3"}};
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
    const auto file = gguf::read_gguf(path);
    ASSERT_TRUE(file);
    const auto facts = model::describe_model(*file);
    ASSERT_TRUE(facts);
    PlanConfig config;
    config.ctx_total = 4096;
    const auto plan = make_plan(*facts, config, {});
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, ExitCode::usage);
    const std::string& message = plan.error().message;
    EXPECT_NE(message.find("architecture '" + arch + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("nearest supported: " + family + ";"), std::string::npos) << message;
  }
}

// A corrupt header's architecture of a mebibyte: compared by its first 64 characters (the
// fuzzer found the edit distances quadratic in it) and shown by them. How fast that is is
// measured by bench/plan_bench (BM_DescribeOverlongArchitectureName), not timed here.
TEST(ArchitectureCoverage, AnOverlongArchitectureNameIsRefusedAndShownShort) {
  const std::string arch = "qwen3moe" + std::string(1 << 20, 'x');
  GgufWriter w;
  w.add("general.architecture", gguf_string(arch))
      .tensor("token_embd.weight", {64, 100}, GgmlType::f16);
  const auto facts = testing::describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_FALSE(facts->supported);
  const std::string& reason = facts->unsupported_reason;
  EXPECT_LT(reason.size(), 600u) << reason.substr(0, 600);
  EXPECT_NE(reason.find("… (1048584 characters)"), std::string::npos) << reason.substr(0, 600);
  EXPECT_NE(reason.find("nearest supported: qwen3moe;"), std::string::npos) << reason;
}

}  // namespace
}  // namespace gb10tune::plan
