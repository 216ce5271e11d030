// The decode ceiling as the context fills, judged against llama.cpp's published llama-bench runs
// on a DGX Spark (benches/dgx-spark/dgx-spark.md of ggml-org/llama.cpp, build 11fb327bf, -fa 1
// -ub 2048 -ngl 99, tg32 at depths 0…32768) on headers shaped as two of those models.
#include "gb10tune/plan/decode_reads.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "gb10tune/launch/target_machine.hpp"
#include "gb10tune/launch/what_fits.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::plan {
namespace {

using gguf::GgmlType;
using testing::gguf_string;
using testing::gguf_uint32;
using testing::GgufWriter;

// ggml-org/Qwen2.5-Coder-7B-Q8_0-GGUF's shapes: 28 blocks of 3584, 28 heads and 4 KV heads of
// 128, n_ff 18944, a 152064-token vocabulary, every matrix Q8_0 (the output too), biases and
// norms f32, trained to 32768 tokens.
GgufWriter qwen2_7b_q8_0() {
  GgufWriter w;
  w.add("general.architecture", gguf_string("qwen2"))
      .add("qwen2.block_count", gguf_uint32(28))
      .add("qwen2.context_length", gguf_uint32(32768))
      .add("qwen2.embedding_length", gguf_uint32(3584))
      .add("qwen2.feed_forward_length", gguf_uint32(18944))
      .add("qwen2.attention.head_count", gguf_uint32(28))
      .add("qwen2.attention.head_count_kv", gguf_uint32(4))
      .add("qwen2.attention.layer_norm_rms_epsilon", testing::gguf_float32(1e-6f));
  w.tensor("token_embd.weight", {3584, 152064}, GgmlType::q8_0);
  for (int il = 0; il < 28; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    w.tensor(b + "attn_norm.weight", {3584}, GgmlType::f32)
        .tensor(b + "attn_q.weight", {3584, 3584}, GgmlType::q8_0)
        .tensor(b + "attn_q.bias", {3584}, GgmlType::f32)
        .tensor(b + "attn_k.weight", {3584, 512}, GgmlType::q8_0)
        .tensor(b + "attn_k.bias", {512}, GgmlType::f32)
        .tensor(b + "attn_v.weight", {3584, 512}, GgmlType::q8_0)
        .tensor(b + "attn_v.bias", {512}, GgmlType::f32)
        .tensor(b + "attn_output.weight", {3584, 3584}, GgmlType::q8_0)
        .tensor(b + "ffn_norm.weight", {3584}, GgmlType::f32)
        .tensor(b + "ffn_gate.weight", {3584, 18944}, GgmlType::q8_0)
        .tensor(b + "ffn_up.weight", {3584, 18944}, GgmlType::q8_0)
        .tensor(b + "ffn_down.weight", {18944, 3584}, GgmlType::q8_0);
  }
  w.tensor("output_norm.weight", {3584}, GgmlType::f32);
  w.tensor("output.weight", {3584, 152064}, GgmlType::q8_0);
  return w;
}

// ggml-org/Qwen3-Coder-30B-A3B-Instruct-Q8_0-GGUF's shapes: 48 blocks of 2048, 32 heads and 4
// KV heads of 128, 128 experts of n_ff 768 of which 8 run per token, a 151936-token
// vocabulary, Q8_0 matrices, trained to 262144 tokens.
GgufWriter qwen3moe_30b_a3b_q8_0() {
  GgufWriter w;
  w.add("general.architecture", gguf_string("qwen3moe"))
      .add("qwen3moe.block_count", gguf_uint32(48))
      .add("qwen3moe.context_length", gguf_uint32(262144))
      .add("qwen3moe.embedding_length", gguf_uint32(2048))
      .add("qwen3moe.feed_forward_length", gguf_uint32(5472))
      .add("qwen3moe.expert_feed_forward_length", gguf_uint32(768))
      .add("qwen3moe.expert_count", gguf_uint32(128))
      .add("qwen3moe.expert_used_count", gguf_uint32(8))
      .add("qwen3moe.attention.head_count", gguf_uint32(32))
      .add("qwen3moe.attention.head_count_kv", gguf_uint32(4))
      .add("qwen3moe.attention.key_length", gguf_uint32(128))
      .add("qwen3moe.attention.value_length", gguf_uint32(128))
      .add("qwen3moe.attention.layer_norm_rms_epsilon", testing::gguf_float32(1e-6f));
  w.tensor("token_embd.weight", {2048, 151936}, GgmlType::q8_0);
  for (int il = 0; il < 48; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    w.tensor(b + "attn_norm.weight", {2048}, GgmlType::f32)
        .tensor(b + "attn_q.weight", {2048, 4096}, GgmlType::q8_0)
        .tensor(b + "attn_k.weight", {2048, 512}, GgmlType::q8_0)
        .tensor(b + "attn_v.weight", {2048, 512}, GgmlType::q8_0)
        .tensor(b + "attn_output.weight", {4096, 2048}, GgmlType::q8_0)
        .tensor(b + "attn_q_norm.weight", {128}, GgmlType::f32)
        .tensor(b + "attn_k_norm.weight", {128}, GgmlType::f32)
        .tensor(b + "ffn_norm.weight", {2048}, GgmlType::f32)
        .tensor(b + "ffn_gate_inp.weight", {2048, 128}, GgmlType::f32)
        .tensor(b + "ffn_gate_exps.weight", {2048, 768, 128}, GgmlType::q8_0)
        .tensor(b + "ffn_up_exps.weight", {2048, 768, 128}, GgmlType::q8_0)
        .tensor(b + "ffn_down_exps.weight", {768, 2048, 128}, GgmlType::q8_0);
  }
  w.tensor("output_norm.weight", {2048}, GgmlType::f32);
  w.tensor("output.weight", {2048, 151936}, GgmlType::q8_0);
  return w;
}

// The facts of `w` written as a file whose data section is a sparse hole (the models are GBs).
Expected<model::ModelFacts> written_facts(const GgufWriter& w) {
  testing::TempDir dir;
  const auto path = dir.path() / "model.gguf";
  w.write(path);
  return model::read_model(path);
}

struct Published {
  std::uint64_t depth;
  double tg32;  // t/s, the published mean
};

// Every published depth: the ceiling at or above the measurement, and measured/ceiling within
// 0.05 of its depth-0 value and inside the expectation band of its kind of model.
void expect_published_runs_hold(const model::ModelFacts& model,
                                const std::array<Published, 5>& runs) {
  launch::DecodeCeiling c =
      launch::decode_ceiling(model.bytes_read_per_token, launch::gb10_machine(), false);
  launch::add_depths(c, model, GgmlType::f16, GgmlType::f16, 32768);
  ASSERT_EQ(c.at_depth.size(), runs.size()) << c.depth_missing;  // the published depths
  double first_ratio = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Published& run = runs[i];
    ASSERT_EQ(c.at_depth[i].depth, run.depth);
    const double ceiling = c.at_depth[i].tps;
    const double ratio = run.tg32 / ceiling;
    if (run.depth == 0) {
      first_ratio = ratio;
    }
    EXPECT_GE(ceiling, run.tg32) << "depth " << run.depth;
    EXPECT_NEAR(ratio, first_ratio, 0.05) << "depth " << run.depth;
    EXPECT_GE(ratio, c.expect.low) << "depth " << run.depth << " " << c.expect.kind;
    EXPECT_LE(ratio, c.expect.high) << "depth " << run.depth << " " << c.expect.kind;
  }
}

TEST(DecodeReads, TheCacheOfEveryFullAttentionLayerPerTokenOfDepth) {
  const auto model = written_facts(qwen2_7b_q8_0());
  ASSERT_TRUE(model) << model.error().message;
  // 28 layers × (K 512 + V 512 values) × 2 bytes of f16: 57344 bytes per token of depth.
  EXPECT_EQ(*cache_bytes_read_at_depth(*model, 0, GgmlType::f16, GgmlType::f16), 0u);
  EXPECT_EQ(*cache_bytes_read_at_depth(*model, 32768, GgmlType::f16, GgmlType::f16),
            57344ull * 32768);
  // q8_0: 34 bytes per 32 values.
  EXPECT_EQ(*cache_bytes_read_at_depth(*model, 1000, GgmlType::q8_0, GgmlType::q8_0),
            28ull * 2 * (512 / 32 * 34) * 1000);
}

TEST(DecodeReads, SlidingWindowLayersReadAtMostTheirWindowAndHybridsTheirState) {
  // The report's qwen35: 16 attention layers of 4 × 256 (K and V), gated delta net elsewhere.
  const auto model = testing::describe(testing::report_model());
  ASSERT_TRUE(model) << model.error().message;
  const std::uint64_t state = model->recurrent_bytes_per_sequence;
  EXPECT_GT(state, 0u);
  EXPECT_EQ(*cache_bytes_read_at_depth(*model, 0, GgmlType::f16, GgmlType::f16), state);
  EXPECT_EQ(*cache_bytes_read_at_depth(*model, 100, GgmlType::f16, GgmlType::f16),
            state + 16ull * 2 * 1024 * 2 * 100);
}

TEST(DecodeReads, DepthsAreZeroThenDoublingStepsThenTheContext) {
  EXPECT_EQ(ceiling_depths(0), (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(ceiling_depths(4096), (std::vector<std::uint64_t>{0, 4096}));
  EXPECT_EQ(ceiling_depths(32768), (std::vector<std::uint64_t>{0, 4096, 8192, 16384, 32768}));
  EXPECT_EQ(ceiling_depths(196608),
            (std::vector<std::uint64_t>{0, 4096, 8192, 16384, 32768, 65536, 131072, 196608}));
}

TEST(DecodeReads, PublishedSparkRunsOfADenseModelStayUnderTheCeilingAtEveryDepth) {
  const auto model = written_facts(qwen2_7b_q8_0());
  ASSERT_TRUE(model) << model.error().message;
  // About 7.5 GB a token at depth 0 (the Q8_0 blocks and output, not the token embedding).
  EXPECT_NEAR(static_cast<double>(model->bytes_read_per_token), 7.51e9, 0.02e9);
  expect_published_runs_hold(
      *model, {{{0, 29.43}, {4096, 28.61}, {8192, 27.38}, {16384, 25.72}, {32768, 22.51}}});
}

TEST(DecodeReads, PublishedSparkRunsOfAMoEStayUnderTheCeilingAtEveryDepth) {
  const auto model = written_facts(qwen3moe_30b_a3b_q8_0());
  ASSERT_TRUE(model) << model.error().message;
  expect_published_runs_hold(
      *model, {{{0, 61.06}, {4096, 54.77}, {8192, 48.02}, {16384, 40.23}, {32768, 30.21}}});
}

}  // namespace
}  // namespace gb10tune::plan
