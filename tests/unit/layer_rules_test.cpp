// The errors of the layer rules (src/core/model/layer_rules.cpp and the family rules), through
// describe_model: each names the file and the key, and a header with several problems is
// refused for the first one llama.cpp's loader would meet.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "gb10tune/model/model_facts.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_models.hpp"

namespace gb10tune::model {
namespace {

using testing::gguf_string;
using testing::gguf_uint32;
using testing::gguf_uint64;
using testing::GgufValueBytes;
using testing::GgufWriter;

constexpr std::uint32_t kU32Max = 0xffffffffu;

// An `arch` header of 4 blocks (context 4096, n_embd 256, 4 heads), with `keys` (suffixes
// after "<arch>.") added or replacing those; a key mapped to nullopt is left out.
using RulesKeys = std::map<std::string, std::optional<GgufValueBytes>>;
GgufWriter rules_header(const std::string& arch, const RulesKeys& keys = {}) {
  RulesKeys all{{"block_count", gguf_uint32(4)},
                {"context_length", gguf_uint32(4096)},
                {"embedding_length", gguf_uint32(256)},
                {"attention.head_count", gguf_uint32(4)}};
  for (const auto& [key, value] : keys) {
    all[key] = value;
  }
  GgufWriter w;
  w.add("general.architecture", gguf_string(arch));
  for (const auto& [key, value] : all) {
    if (value) {
      w.add(arch + "." + key, *value);
    }
  }
  return w;
}

// The SSM sizes a hybrid needs, with `conv`, `inner`, `state` and `groups`.
RulesKeys rules_ssm(std::uint32_t conv, std::uint32_t inner, std::uint32_t state,
                    std::uint32_t groups) {
  return {{"ssm.conv_kernel", gguf_uint32(conv)},
          {"ssm.inner_size", gguf_uint32(inner)},
          {"ssm.state_size", gguf_uint32(state)},
          {"ssm.time_step_rank", gguf_uint32(16)},
          {"ssm.group_count", gguf_uint32(groups)}};
}

RulesKeys rules_with(RulesKeys keys, const RulesKeys& more) {
  for (const auto& [key, value] : more) {
    keys[key] = value;
  }
  return keys;
}

// The error describing `w` gives: "model.gguf: " or "model.gguf: offset N: ", then `tail`.
void expect_rules_error(const GgufWriter& w, const std::string& tail) {
  const auto facts = testing::describe(w, "model.gguf");
  ASSERT_FALSE(facts) << "expected: " << tail;
  const std::string& message = facts.error().message;
  EXPECT_TRUE(message.starts_with("model.gguf: ")) << message;
  EXPECT_TRUE(message.ends_with(tail)) << message << "\nexpected the end: " << tail;
  const std::size_t prefix = message.size() - std::min(message.size(), tail.size());
  const std::string head = message.substr(0, prefix);
  EXPECT_TRUE(head == "model.gguf: " ||
              (head.starts_with("model.gguf: offset ") && head.ends_with(": ")))
      << message;
}

constexpr std::string_view kMissing =
    "is missing; the model was converted by a tool that left it out, or it is not a model of "
    "this architecture";

TEST(LayerRules, EveryCommonKeyProblemNamesTheKey) {
  expect_rules_error(rules_header("llama", {{"context_length", gguf_uint64(1ull << 32)}}),
                     "key 'llama.context_length' is 4294967296, more than llama.cpp's uint32 "
                     "allows; the file is corrupt");
  expect_rules_error(rules_header("llama", {{"embedding_length", std::nullopt}}),
                     "key 'llama.embedding_length' " + std::string(kMissing));
  expect_rules_error(rules_header("llama", {{"block_count", gguf_uint32(0)}}),
                     "key 'llama.block_count' is 0; llama.cpp accepts 1 to 512 layers");
  expect_rules_error(rules_header("llama", {{"block_count", gguf_uint32(513)}}),
                     "key 'llama.block_count' is 513; llama.cpp accepts 1 to 512 layers");
  expect_rules_error(
      rules_header("qwen3moe",
                   {{"expert_count", gguf_uint32(8)}, {"expert_used_count", gguf_uint32(0)}}),
      "key 'qwen3moe.expert_used_count' is 0 with expert_count 8; llama.cpp requires 0 < used "
      "<= count for MoE models and 0 for dense ones");
  expect_rules_error(rules_header("llama", {{"attention.key_length", gguf_uint32(kU32Max)},
                                            {"attention.head_count_kv", gguf_uint32(2)}}),
                     "key 'llama.attention.head_count_kv' gives layer 0 a KV width beyond "
                     "uint32; the head counts or head sizes are corrupt");
  expect_rules_error(rules_header("glm4moe", {{"nextn_predict_layers", gguf_uint32(4)}}),
                     "key 'glm4moe.nextn_predict_layers' is 4, but it must be less than "
                     "block_count (4) as llama.cpp asserts");
}

TEST(LayerRules, EveryFamilyKeyProblemNamesTheKey) {
  expect_rules_error(rules_header("gpt-oss"),
                     "key 'gpt-oss.attention.sliding_window' " + std::string(kMissing));
  const RulesKeys gemma4{
      {"attention.sliding_window", gguf_uint32(512)},
      {"attention.key_length_swa", gguf_uint32(64)},
      {"attention.value_length_swa", gguf_uint32(64)},
      {"attention.sliding_window_pattern", testing::gguf_bool_array({true, false, true, false})}};
  expect_rules_error(
      rules_header("gemma4", rules_with(gemma4, {{"attention.key_length_swa", std::nullopt}})),
      "key 'gemma4.attention.key_length_swa' is missing; llama.cpp requires it "
      "for gemma4");
  expect_rules_error(
      rules_header("gemma4", rules_with(gemma4, {{"attention.shared_kv_layers", gguf_uint32(3)}})),
      "key 'gemma4.attention.shared_kv_layers' is 3 of 4 layers; llama.cpp needs at least 2 "
      "layers with their own KV, so the file is corrupt");
  expect_rules_error(rules_header("deepseek2", {{"attention.key_length_mla", gguf_uint32(192)},
                                                {"attention.value_length_mla", gguf_uint32(128)}}),
                     "key 'deepseek2.attention.kv_lora_rank' " + std::string(kMissing));
  expect_rules_error(
      rules_header("qwen35", rules_with(rules_ssm(4, 512, 64, 4),
                                        {{"full_attention_interval", gguf_uint32(0)}})),
      "key 'qwen35.full_attention_interval' is 0; llama.cpp would divide by zero, so the file "
      "is corrupt");
  expect_rules_error(rules_header("qwen35", rules_with(rules_ssm(4, 512, 64, 4),
                                                       {{"nextn_predict_layers", gguf_uint32(5)}})),
                     "key 'qwen35.nextn_predict_layers' is 5, but it must be less than "
                     "block_count (4) as llama.cpp asserts");
  expect_rules_error(rules_header("granitehybrid"),
                     "key 'granitehybrid.ssm.conv_kernel' " + std::string(kMissing));
}

TEST(LayerRules, RecurrentStateThatOverflowsNamesTheFigure) {
  expect_rules_error(rules_header("qwen35", rules_ssm(4, 512, kU32Max, kU32Max)),
                     "2 × ssm.group_count × ssm.state_size overflows 64 bits; the "
                     "hyperparameters are corrupt");
  expect_rules_error(rules_header("granitehybrid", rules_ssm(kU32Max, kU32Max, kU32Max, 1)),
                     "the conv state size overflows 64 bits; the hyperparameters are corrupt");
  expect_rules_error(rules_header("granitehybrid", rules_ssm(1, kU32Max, kU32Max, 1)),
                     "the recurrent state size overflows 64 bits; the hyperparameters are "
                     "corrupt");
}

TEST(LayerRules, NemotronHWithMtpBlocksIsUnsupportedNotAnError) {
  const auto facts = testing::describe(rules_header(
      "nemotron_h",
      rules_with(rules_ssm(4, 512, 64, 4), {{"nextn_predict_layers", gguf_uint32(1)}})));
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_FALSE(facts->supported);
  EXPECT_EQ(facts->unsupported_reason,
            "nemotron_h with MTP blocks (nemotron_h.nextn_predict_layers = 1): where llama.cpp "
            "caches them is not covered by gb10tune's layer rules yet");
}

// Where a header has two problems, the one llama.cpp's loader reads first is reported.
TEST(LayerRules, TheFirstProblemInReadingOrderIsReported) {
  const GgufValueBytes text = gguf_string("x");
  const auto first_named = [](const GgufWriter& w, const std::string& key) {
    const auto facts = testing::describe(w);
    ASSERT_FALSE(facts) << key;
    EXPECT_NE(facts.error().message.find("'" + key + "'"), std::string::npos)
        << facts.error().message;
  };
  first_named(rules_header("llama", {{"context_length", text}, {"embedding_length", text}}),
              "llama.context_length");
  first_named(rules_header("llama", {{"embedding_length", text}, {"block_count", text}}),
              "llama.embedding_length");
  first_named(rules_header("llama", {{"expert_count", text}, {"expert_used_count", text}}),
              "llama.expert_count");
  first_named(
      rules_header("llama", {{"attention.head_count_kv", text}, {"attention.key_length", text}}),
      "llama.attention.head_count_kv");
  first_named(rules_header("llama", {{"attention.key_length", text},
                                     {"attention.value_length", text},
                                     {"attention.key_length_swa", text}}),
              "llama.attention.key_length");
  first_named(rules_header("llama", {{"attention.key_length_swa", text},
                                     {"attention.value_length_swa", text}}),
              "llama.attention.key_length_swa");
  first_named(rules_header("deepseek2", {{"attention.key_length_mla", text},
                                         {"attention.value_length_mla", text}}),
              "deepseek2.attention.key_length_mla");
  first_named(rules_header("qwen35", {{"full_attention_interval", gguf_uint32(0)}}),
              "qwen35.ssm.conv_kernel");
  // The SWA head sizes are common keys, read before any family's: gemma4's missing
  // sliding_window comes second.
  first_named(rules_header("gemma4", {{"attention.key_length_swa", text}}),
              "gemma4.attention.key_length_swa");
  first_named(rules_header("gemma4"), "gemma4.attention.sliding_window");
  first_named(
      rules_header("nemotron_h", {{"feed_forward_length", text}, {"attention.key_length", text}}),
      "nemotron_h.attention.key_length");
  first_named(rules_header("nemotron_h", {{"feed_forward_length", text}}),
              "nemotron_h.feed_forward_length");
}

}  // namespace
}  // namespace gb10tune::model
