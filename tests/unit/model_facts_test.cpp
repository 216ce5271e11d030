#include "gb10tune/model/model_facts.hpp"

#include <gtest/gtest.h>

#include "support/gguf_writer.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::model {
namespace {

using gguf::GgmlType;
using testing::describe;
using testing::gguf_string;
using testing::gguf_uint32;
using testing::GgufWriter;
using testing::report_model;

std::uint64_t kv(const ModelFacts& facts, KvScope scope, GgmlType type = GgmlType::f16) {
  const auto bytes = facts.kv_bytes_per_cell(scope, type, type);
  EXPECT_TRUE(bytes) << bytes.error().message;
  return bytes.value_or(0);
}

TEST(ModelFacts, ReportModelKeepsKvInSixteenLayersAt64KiBPerToken) {
  GgufWriter w = report_model();
  w.tensor("token_embd.weight", {256, 1000}, GgmlType::q8_0)             // 272000 bytes
      .tensor("output.weight", {256, 1000}, GgmlType::q6_k)              // 210000
      .tensor("blk.0.attn_qkv.weight", {256, 256}, GgmlType::q4_k)       // 36864
      .tensor("blk.3.attn_q.weight", {256, 256}, GgmlType::f16)          // 131072
      .tensor("blk.64.nextn.eh_proj.weight", {512, 256}, GgmlType::f16)  // 262144
      .tensor("blk.64.attn_q.weight", {256, 256}, GgmlType::q8_0);       // 69632
  const auto facts = describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_TRUE(facts->supported);
  EXPECT_EQ(facts->architecture, "qwen35");
  EXPECT_EQ(facts->name, "Qwen3.8-27B");
  EXPECT_EQ(facts->context_length, 262144u);
  EXPECT_EQ(facts->block_count, 65u);
  EXPECT_EQ(facts->main_layer_count, 64u);
  EXPECT_EQ(facts->mtp_layer_count, 1u);
  EXPECT_TRUE(facts->has_mtp());
  ASSERT_EQ(facts->layers.size(), 65u);

  // Full attention on layers 3, 7, …, 63; the rest of the main stack is gated delta net.
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 16u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 0u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::mtp), 1u);
  EXPECT_TRUE(facts->layers[3].main_kv);
  EXPECT_FALSE(facts->layers[3].recurrent);
  EXPECT_TRUE(facts->layers[0].recurrent);
  EXPECT_FALSE(facts->layers[0].main_kv);
  EXPECT_TRUE(facts->layers[63].main_kv);
  EXPECT_TRUE(facts->layers[64].mtp);
  EXPECT_FALSE(facts->layers[64].recurrent);
  EXPECT_FALSE(facts->layers[64].main_kv);
  EXPECT_EQ(facts->layers[3].k_width, 1024u);
  EXPECT_EQ(facts->layers[3].v_width, 1024u);

  // 16 layers × 4 heads × 256 dims × 2 (K and V) × 2 bytes (f16) = 65536 (K13).
  EXPECT_EQ(kv(*facts, KvScope::full_attention), 65536u);
  EXPECT_EQ(kv(*facts, KvScope::mtp), 4096u);  // 68 KiB per token with the MTP draft (K8)
  EXPECT_EQ(kv(*facts, KvScope::full_attention, GgmlType::q8_0), 16u * 2 * 1088);
  EXPECT_EQ(kv(*facts, KvScope::full_attention, GgmlType::q4_0), 16u * 2 * 576);
  EXPECT_EQ(kv(*facts, KvScope::full_attention, GgmlType::f32), 131072u);

  // Gated delta net state: n_embd_r = (4 - 1) × (6144 + 2 × 16 × 128) = 30720,
  // n_embd_s = 128 × 6144 = 786432, f32, over 48 recurrent layers.
  EXPECT_EQ(facts->recurrent_layer_count, 48u);
  EXPECT_EQ(facts->conv_state_width, 30720u);
  EXPECT_EQ(facts->ssm_state_width, 786432u);
  EXPECT_EQ(facts->recurrent_bytes_per_sequence, 48ull * (30720 + 786432) * 4);
  EXPECT_TRUE(facts->recurrent_rollback);

  EXPECT_EQ(facts->weight_bytes, 272000u + 210000 + 36864 + 131072 + 262144 + 69632);
  EXPECT_EQ(facts->parameter_count, 256000u * 2 + 65536 * 2 + 131072 + 65536);
  EXPECT_EQ(facts->token_embedding_bytes, 272000u);
  EXPECT_FALSE(facts->tied_output);
  EXPECT_EQ(facts->mtp_weight_bytes, 262144u + 69632);
  EXPECT_FALSE(facts->is_moe());
  // Per token: everything but the embedding lookup and the MTP block.
  EXPECT_EQ(facts->bytes_read_per_token, 210000u + 36864 + 131072);
}

TEST(ModelFacts, ReportModelWithoutMtpHasTheSameKv) {
  const auto facts = describe(report_model(64, 0));
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->main_layer_count, 64u);
  EXPECT_FALSE(facts->has_mtp());
  EXPECT_EQ(kv(*facts, KvScope::full_attention), 65536u);
  EXPECT_EQ(kv(*facts, KvScope::mtp), 0u);
  EXPECT_EQ(facts->recurrent_layer_count, 48u);
}

TEST(ModelFacts, QwenHybridRecurrentLayersFromAPerLayerArray) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("qwen35"))
      .add("qwen35.block_count", gguf_uint32(6))
      .add("qwen35.context_length", gguf_uint32(4096))
      .add("qwen35.embedding_length", gguf_uint32(1024))
      .add("qwen35.attention.head_count", gguf_uint32(8))
      .add("qwen35.attention.head_count_kv", testing::gguf_int32_array({2, 2, 2, 4, 2, 2}))
      .add("qwen35.attention.recurrent_layers",
           testing::gguf_bool_array({true, false, true, false, true, false}))
      .add("qwen35.nextn_predict_layers", gguf_uint32(1))
      .add("qwen35.ssm.conv_kernel", gguf_uint32(4))
      .add("qwen35.ssm.inner_size", gguf_uint32(2048))
      .add("qwen35.ssm.state_size", gguf_uint32(128))
      .add("qwen35.ssm.time_step_rank", gguf_uint32(16))
      .add("qwen35.ssm.group_count", gguf_uint32(16));
  const auto facts = describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  // Head size 1024 / 8 = 128. Layers 1 and 3 are attention in the main stack; 5 is MTP.
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 2u);
  EXPECT_EQ(facts->layers[3].k_width, 512u);
  EXPECT_EQ(kv(*facts, KvScope::full_attention), (256u + 512u) * 2 * 2);
  EXPECT_EQ(kv(*facts, KvScope::mtp), 256u * 2 * 2);
  EXPECT_EQ(facts->recurrent_layer_count, 3u);
  EXPECT_EQ(facts->v_width_max, 512u);
  // Without flash attention every layer's V is as wide as the widest.
  const auto transposed =
      facts->kv_bytes_per_cell(KvScope::full_attention, GgmlType::f16, GgmlType::f16, true);
  ASSERT_TRUE(transposed);
  EXPECT_EQ(*transposed, (256u + 512u) * 2 + 512u * 2 * 2);
}

TEST(ModelFacts, QwenHybridMoeCountsOnlyTheActiveExpertsPerToken) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("qwen35moe"))
      .add("qwen35moe.block_count", gguf_uint32(41))
      .add("qwen35moe.context_length", gguf_uint32(262144))
      .add("qwen35moe.embedding_length", gguf_uint32(2048))
      .add("qwen35moe.attention.head_count", gguf_uint32(16))
      .add("qwen35moe.attention.head_count_kv", gguf_uint32(2))
      .add("qwen35moe.attention.key_length", gguf_uint32(256))
      .add("qwen35moe.attention.value_length", gguf_uint32(256))
      .add("qwen35moe.expert_count", gguf_uint32(256))
      .add("qwen35moe.expert_used_count", gguf_uint32(8))
      .add("qwen35moe.nextn_predict_layers", gguf_uint32(1))
      .add("qwen35moe.ssm.conv_kernel", gguf_uint32(4))
      .add("qwen35moe.ssm.inner_size", gguf_uint32(4096))
      .add("qwen35moe.ssm.state_size", gguf_uint32(128))
      .add("qwen35moe.ssm.time_step_rank", gguf_uint32(32))
      .add("qwen35moe.ssm.group_count", gguf_uint32(16))
      .tensor("token_embd.weight", {256, 100}, GgmlType::f16)               // 51200
      .tensor("blk.0.ffn_up_exps.weight", {256, 512, 256}, GgmlType::q4_k)  // 18874368
      .tensor("blk.0.ffn_up_shexp.weight", {256, 512}, GgmlType::q8_0)      // 139264
      .tensor("blk.0.ffn_gate_inp.weight", {256, 256}, GgmlType::f32)       // 262144
      .tensor("blk.40.ffn_down_exps.weight", {256, 512, 256}, GgmlType::q4_k);
  const auto facts = describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_TRUE(facts->is_moe());
  EXPECT_EQ(facts->expert_count, 256u);
  EXPECT_EQ(facts->expert_used_count, 8u);
  EXPECT_EQ(facts->main_layer_count, 40u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 10u);
  EXPECT_EQ(kv(*facts, KvScope::full_attention), 10u * 512 * 2 * 2);
  EXPECT_EQ(facts->recurrent_layer_count, 30u);
  EXPECT_EQ(facts->expert_weight_bytes, 18874368u);  // the MTP block's experts are MTP weights
  EXPECT_EQ(facts->mtp_weight_bytes, 18874368u);
  EXPECT_TRUE(facts->tied_output);  // no output.weight: the embedding is the LM head
  EXPECT_EQ(facts->bytes_read_per_token, 51200u + 18874368 / 256 * 8 + 139264 + 262144);
}

TEST(ModelFacts, Qwen3NextHasNoRecurrentRollback) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("qwen3next"))
      .add("qwen3next.block_count", gguf_uint32(48))
      .add("qwen3next.context_length", gguf_uint32(262144))
      .add("qwen3next.embedding_length", gguf_uint32(2048))
      .add("qwen3next.attention.head_count", gguf_uint32(16))
      .add("qwen3next.attention.head_count_kv", gguf_uint32(2))
      .add("qwen3next.attention.key_length", gguf_uint32(256))
      .add("qwen3next.attention.value_length", gguf_uint32(256))
      .add("qwen3next.expert_count", gguf_uint32(512))
      .add("qwen3next.expert_used_count", gguf_uint32(10))
      .add("qwen3next.ssm.conv_kernel", gguf_uint32(4))
      .add("qwen3next.ssm.inner_size", gguf_uint32(4096))
      .add("qwen3next.ssm.state_size", gguf_uint32(128))
      .add("qwen3next.ssm.time_step_rank", gguf_uint32(32))
      .add("qwen3next.ssm.group_count", gguf_uint32(16));
  const auto facts = describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 12u);
  EXPECT_EQ(facts->recurrent_layer_count, 36u);
  EXPECT_FALSE(facts->recurrent_rollback);
  EXPECT_EQ(facts->conv_state_width, 3u * (4096 + 2 * 16 * 128));
}

GgufWriter dense(const std::string& arch, std::uint32_t blocks, std::uint32_t embd,
                 std::uint32_t heads) {
  GgufWriter w;
  w.add("general.architecture", gguf_string(arch))
      .add(arch + ".block_count", gguf_uint32(blocks))
      .add(arch + ".context_length", gguf_uint32(32768))
      .add(arch + ".embedding_length", gguf_uint32(embd))
      .add(arch + ".attention.head_count", gguf_uint32(heads));
  return w;
}

TEST(ModelFacts, LlamaWithoutHeadCountKvHasOneKvHeadPerHead) {
  // Llama 2 7B: 32 layers × 4096 × 2 × 2 bytes = 512 KiB per token.
  GgufWriter w = dense("llama", 32, 4096, 32);
  w.tensor("token_embd.weight", {4096, 10}, GgmlType::f16)
      .tensor("output.weight", {4096, 10}, GgmlType::f16)
      .tensor("blk.0.attn_q.weight", {4096, 32}, GgmlType::q4_0);
  const auto facts = describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 32u);
  EXPECT_EQ(facts->layers[0].head_count_kv, 32u);
  EXPECT_EQ(facts->layers[0].k_width, 4096u);
  EXPECT_EQ(kv(*facts, KvScope::full_attention), 524288u);
  EXPECT_FALSE(facts->has_mtp());
  EXPECT_FALSE(facts->is_hybrid());
  EXPECT_EQ(facts->recurrent_bytes_per_sequence, 0u);
  EXPECT_EQ(facts->bytes_read_per_token, 4096u * 10 * 2 + 4096 * 32 / 32 * 18);
}

TEST(ModelFacts, LlamaThreeWithGroupedQueryAttention) {
  GgufWriter w = dense("llama", 32, 4096, 32);
  w.add("llama.attention.head_count_kv", gguf_uint32(8));
  const auto facts = describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(kv(*facts, KvScope::full_attention), 131072u);
}

TEST(ModelFacts, Qwen2AndQwen3AndQwen3Moe) {
  GgufWriter qwen2 = dense("qwen2", 28, 3584, 28);
  qwen2.add("qwen2.attention.head_count_kv", gguf_uint32(4));
  const auto q2 = describe(qwen2);
  ASSERT_TRUE(q2) << q2.error().message;
  EXPECT_EQ(kv(*q2, KvScope::full_attention), 28u * 4 * 128 * 2 * 2);

  GgufWriter qwen3 = dense("qwen3", 64, 5120, 64);
  qwen3.add("qwen3.attention.head_count_kv", gguf_uint32(8))
      .add("qwen3.attention.key_length", gguf_uint32(128))
      .add("qwen3.attention.value_length", gguf_uint32(128));
  const auto q3 = describe(qwen3);
  ASSERT_TRUE(q3) << q3.error().message;
  EXPECT_EQ(kv(*q3, KvScope::full_attention), 262144u);

  GgufWriter moe = dense("qwen3moe", 48, 2048, 32);
  moe.add("qwen3moe.attention.head_count_kv", gguf_uint32(4))
      .add("qwen3moe.attention.key_length", gguf_uint32(128))
      .add("qwen3moe.attention.value_length", gguf_uint32(128))
      .add("qwen3moe.expert_count", gguf_uint32(128))
      .add("qwen3moe.expert_used_count", gguf_uint32(8))
      .tensor("blk.0.ffn_gate_exps.weight", {256, 64, 128}, GgmlType::q8_0)
      .tensor("blk.0.attn_k.weight", {2048, 512}, GgmlType::q8_0);
  const auto q3moe = describe(moe);
  ASSERT_TRUE(q3moe) << q3moe.error().message;
  EXPECT_EQ(kv(*q3moe, KvScope::full_attention), 98304u);
  const std::uint64_t experts = 256ull * 64 * 128 / 32 * 34;
  EXPECT_EQ(q3moe->expert_weight_bytes, experts);
  EXPECT_EQ(q3moe->bytes_read_per_token, experts / 128 * 8 + 2048ull * 512 / 32 * 34);
}

GgufWriter gemma3(std::uint32_t sliding_window) {
  GgufWriter w = dense("gemma3", 62, 5376, 32);
  w.add("gemma3.attention.head_count_kv", gguf_uint32(16))
      .add("gemma3.attention.key_length", gguf_uint32(128))
      .add("gemma3.attention.value_length", gguf_uint32(128))
      .add("gemma3.attention.sliding_window", gguf_uint32(sliding_window));
  return w;
}

TEST(ModelFacts, Gemma3SlidingWindowEveryLayerButEachSixth) {
  const auto facts = describe(gemma3(1024));
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->sliding_window, 1024u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 10u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 52u);
  EXPECT_FALSE(facts->layers[5].sliding_window);
  EXPECT_TRUE(facts->layers[6].sliding_window);
  EXPECT_FALSE(facts->layers[59].sliding_window);
  EXPECT_TRUE(facts->layers[61].sliding_window);
  EXPECT_EQ(kv(*facts, KvScope::full_attention), 10u * 8192);
  EXPECT_EQ(kv(*facts, KvScope::sliding_window), 52u * 8192);
}

TEST(ModelFacts, Gemma3PatternScalarAndSwaHeadSizes) {
  GgufWriter w = gemma3(512);
  w.add("gemma3.attention.sliding_window_pattern", gguf_uint32(4))
      .add("gemma3.attention.key_length_swa", gguf_uint32(64))
      .add("gemma3.attention.value_length_swa", gguf_uint32(64));
  const auto facts = describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  // Layers 3, 7, …, 59 are full: 15 of 62.
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 15u);
  EXPECT_EQ(facts->layers[0].k_width, 16u * 64);
  EXPECT_EQ(facts->layers[3].k_width, 16u * 128);
  EXPECT_EQ(kv(*facts, KvScope::sliding_window), 47u * 4096);

  // An array pattern is ignored by llama.cpp's gemma3 loader: the default 6 applies.
  GgufWriter array = gemma3(512);
  array.add("gemma3.attention.sliding_window_pattern",
            testing::gguf_bool_array(std::vector<bool>(62, true)));
  const auto ignored = describe(array);
  ASSERT_TRUE(ignored) << ignored.error().message;
  EXPECT_EQ(ignored->kv_layer_count(KvScope::full_attention), 10u);

  // Without a window (or a zero one) every layer is full attention.
  const auto none = describe(gemma3(0));
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(none->kv_layer_count(KvScope::full_attention), 62u);
  EXPECT_EQ(none->sliding_window, 0u);
}

TEST(ModelFacts, GptOssAlternatesSlidingAndFullLayers) {
  GgufWriter w = dense("gpt-oss", 24, 2880, 64);
  w.add("gpt-oss.attention.head_count_kv", gguf_uint32(8))
      .add("gpt-oss.attention.key_length", gguf_uint32(64))
      .add("gpt-oss.attention.value_length", gguf_uint32(64))
      .add("gpt-oss.attention.sliding_window", gguf_uint32(128))
      .add("gpt-oss.expert_count", gguf_uint32(32))
      .add("gpt-oss.expert_used_count", gguf_uint32(4))
      .tensor("blk.0.ffn_up_exps.weight", {2880, 64, 32}, GgmlType::mxfp4)
      .tensor("blk.0.ffn_up_exps.bias", {2880, 32}, GgmlType::f32);
  const auto facts = describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_TRUE(facts->layers[0].sliding_window);
  EXPECT_FALSE(facts->layers[1].sliding_window);
  EXPECT_EQ(facts->kv_layer_count(KvScope::full_attention), 12u);
  EXPECT_EQ(facts->kv_layer_count(KvScope::sliding_window), 12u);
  EXPECT_EQ(kv(*facts, KvScope::full_attention), 12u * 2048);
  const std::uint64_t weights = 2880ull * 64 * 32 / 32 * 17;
  const std::uint64_t biases = 2880ull * 32 * 4;
  EXPECT_EQ(facts->expert_weight_bytes, weights + biases);
  EXPECT_EQ(facts->bytes_read_per_token, weights / 32 * 4 + biases / 32 * 4);

  GgufWriter missing = dense("gpt-oss", 24, 2880, 64);
  const auto error = describe(missing);
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().message.find("'gpt-oss.attention.sliding_window' is missing"),
            std::string::npos)
      << error.error().message;
}

TEST(ModelFacts, UnknownArchitectureIsUnsupportedButWeighed) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("mamba2"))
      .add("mamba2.block_count", gguf_uint32(64))
      .add("mamba2.context_length", gguf_uint32(1048576))
      .tensor("token_embd.weight", {64, 10}, GgmlType::f32);
  const auto facts = describe(w);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_FALSE(facts->supported);
  EXPECT_NE(
      facts->unsupported_reason.find("architecture 'mamba2' is not supported: recurrent only"),
      std::string::npos)
      << facts->unsupported_reason;
  EXPECT_EQ(facts->context_length, 1048576u);
  EXPECT_EQ(facts->block_count, 64u);
  EXPECT_EQ(facts->weight_bytes, 2560u);
  EXPECT_TRUE(facts->layers.empty());
}

// Found by the GGUF fuzzer: an unsupported model's block_count sized a per-layer table, so
// 2^31 asked for 16 GiB. A count llama.cpp would not load is unknown (0), and the blocks'
// weights count with the output layer's.
TEST(ModelFacts, UnsupportedModelWithAnImpossibleBlockCountIsWeighedWithoutLayers) {
  for (const std::uint32_t blocks : {513u, 0x80000000u, 0xffffffffu}) {
    GgufWriter w;
    w.add("general.architecture", gguf_string("mamba2"))
        .add("mamba2.block_count", gguf_uint32(blocks))
        .tensor("blk.0.ssm_in.weight", {64, 4}, GgmlType::f32)
        .tensor("token_embd.weight", {64, 10}, GgmlType::f32);
    const auto facts = describe(w);
    ASSERT_TRUE(facts) << facts.error().message;
    EXPECT_FALSE(facts->supported);
    EXPECT_EQ(facts->block_count, 0u) << blocks;
    EXPECT_TRUE(facts->layer_weight_bytes.empty()) << blocks;
    EXPECT_EQ(facts->weight_bytes, 2560u + 1024u) << blocks;
    EXPECT_EQ(facts->output_weight_bytes, 1024u + 2560u) << blocks;  // + the tied output
  }
  GgufWriter at_limit;
  at_limit.add("general.architecture", gguf_string("mamba2"))
      .add("mamba2.block_count", gguf_uint32(512))
      .tensor("token_embd.weight", {64, 10}, GgmlType::f32);
  const auto facts = describe(at_limit);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->block_count, 512u);
  EXPECT_EQ(facts->layer_weight_bytes.size(), 512u);
}

TEST(ModelFacts, MissingArchitectureIsAnError) {
  const auto facts = describe(GgufWriter().add("general.name", gguf_string("x")));
  ASSERT_FALSE(facts);
  EXPECT_NE(facts.error().message.find("model.gguf: no general.architecture"), std::string::npos);
}

TEST(ModelFacts, MmprojFileIsAProjectorNotAModel) {
  GgufWriter w;
  w.add("general.architecture", gguf_string("clip"))
      .add("clip.projector_type", gguf_string("qwen3vl_merger"))
      .add("clip.has_vision_encoder", testing::gguf_bool(true))
      .tensor("v.patch_embd.weight", {16, 16, 3, 1152}, GgmlType::f16)
      .tensor("mm.0.weight", {4608, 64}, GgmlType::q8_0);
  const std::string bytes = w.bytes();
  const auto file = gguf::parse_gguf(
      {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "mmproj-F16.gguf");
  ASSERT_TRUE(file) << file.error().message;
  const auto as_model = describe_model(*file);
  ASSERT_TRUE(as_model);
  EXPECT_FALSE(as_model->supported);
  EXPECT_NE(as_model->unsupported_reason.find("mmproj"), std::string::npos);

  const auto projector = describe_projector(*file);
  ASSERT_TRUE(projector) << projector.error().message;
  EXPECT_EQ(projector->projector_type, "qwen3vl_merger");
  EXPECT_TRUE(projector->has_vision);
  EXPECT_FALSE(projector->has_audio);
  EXPECT_EQ(projector->weight_bytes, 16ull * 16 * 3 * 1152 * 2 + 4608ull * 64 / 32 * 34);

  const std::string model_bytes = report_model().bytes();
  const auto model = gguf::parse_gguf(
      {reinterpret_cast<const std::uint8_t*>(model_bytes.data()), model_bytes.size()}, "m.gguf");
  ASSERT_TRUE(model);
  const auto not_projector = describe_projector(*model);
  ASSERT_FALSE(not_projector);
  EXPECT_NE(not_projector.error().message.find("'qwen35' is not a multimodal projector"),
            std::string::npos);
}

TEST(ModelFacts, InconsistentHyperparametersAreErrorsNamingTheKey) {
  GgufWriter short_array = report_model();
  short_array.add("qwen35.attention.head_count_kv", testing::gguf_int32_array({4, 4}));
  // The writer keeps both entries; the reader refuses the duplicate key first.
  EXPECT_FALSE(describe(short_array));

  GgufWriter wrong_length = dense("qwen3", 4, 1024, 8);
  wrong_length.add("qwen3.attention.head_count_kv", testing::gguf_int32_array({4, 4, 4}));
  const auto length = describe(wrong_length);
  ASSERT_FALSE(length);
  EXPECT_NE(length.error().message.find("'qwen3.attention.head_count_kv' has 3 elements, "
                                        "expected one per layer (4)"),
            std::string::npos)
      << length.error().message;

  const auto nextn = describe(report_model(65, 65));
  ASSERT_FALSE(nextn);
  EXPECT_NE(nextn.error().message.find("nextn_predict_layers' is 65"), std::string::npos);

  GgufWriter interval;
  interval.add("general.architecture", gguf_string("qwen35"))
      .add("qwen35.block_count", gguf_uint32(8))
      .add("qwen35.context_length", gguf_uint32(4096))
      .add("qwen35.embedding_length", gguf_uint32(1024))
      .add("qwen35.full_attention_interval", gguf_uint32(0))
      .add("qwen35.ssm.conv_kernel", gguf_uint32(4))
      .add("qwen35.ssm.inner_size", gguf_uint32(2048))
      .add("qwen35.ssm.state_size", gguf_uint32(128))
      .add("qwen35.ssm.time_step_rank", gguf_uint32(16))
      .add("qwen35.ssm.group_count", gguf_uint32(16));
  const auto zero = describe(interval);
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message.find("full_attention_interval' is 0"), std::string::npos);

  GgufWriter missing_ssm = dense("qwen35", 8, 1024, 8);
  const auto ssm = describe(missing_ssm);
  ASSERT_FALSE(ssm);
  EXPECT_NE(ssm.error().message.find("'qwen35.ssm.conv_kernel' is missing"), std::string::npos);

  GgufWriter experts = dense("qwen3moe", 8, 1024, 8);
  experts.add("qwen3moe.expert_count", gguf_uint32(8))
      .add("qwen3moe.expert_used_count", gguf_uint32(9));
  EXPECT_FALSE(describe(experts));

  GgufWriter string_blocks;
  string_blocks.add("general.architecture", gguf_string("llama"))
      .add("llama.context_length", gguf_uint32(4096))
      .add("llama.embedding_length", gguf_uint32(4096))
      .add("llama.block_count", gguf_string("32"));
  const auto type = describe(string_blocks);
  ASSERT_FALSE(type);
  EXPECT_NE(type.error().message.find("'llama.block_count' is a string"), std::string::npos)
      << type.error().message;

  GgufWriter too_many = dense("llama", 513, 1024, 8);
  EXPECT_FALSE(describe(too_many));
}

TEST(ModelFacts, CacheTypeThatDoesNotDivideTheWidthIsAnError) {
  const auto facts = describe(dense("llama", 2, 400, 4));  // head size 100, width 400
  ASSERT_TRUE(facts) << facts.error().message;
  const auto q4 = facts->kv_bytes_per_cell(KvScope::full_attention, GgmlType::q4_0, GgmlType::q4_0);
  ASSERT_FALSE(q4);
  EXPECT_NE(q4.error().message.find("layer 0 has a K width of 400, not a multiple of the q4_0 "
                                    "block size 32"),
            std::string::npos)
      << q4.error().message;
  EXPECT_EQ(kv(*facts, KvScope::full_attention, GgmlType::bf16), 2u * 400 * 2 * 2);
}

// A report-model split in three files the way gguf-split writes them: the metadata and the
// first tensors in shard 1, split.no/split.count in every shard. Tensors: token embedding
// (272000 B) and output (210000 B) in shard 1, a main-stack tensor (131072 B) in shard 2, the
// MTP block (262144 B) and one more main-stack tensor (36864 B) in shard 3.
void write_split_model(const testing::TempDir& dir, const std::string& stem) {
  auto shard = [](std::uint16_t no) {
    GgufWriter w;
    w.add("split.no", testing::gguf_uint16(no))
        .add("split.count", testing::gguf_uint16(3))
        .add("split.tensors.count", testing::gguf_int32(5));
    return w;
  };
  GgufWriter first = report_model();
  first.add("split.no", testing::gguf_uint16(0))
      .add("split.count", testing::gguf_uint16(3))
      .add("split.tensors.count", testing::gguf_int32(5));
  first.tensor("token_embd.weight", {256, 1000}, GgmlType::q8_0)
      .tensor("output.weight", {256, 1000}, GgmlType::q6_k);
  first.write(dir.path() / (stem + "-00001-of-00003.gguf"));
  GgufWriter second = shard(1);
  second.tensor("blk.3.attn_q.weight", {256, 256}, GgmlType::f16);
  second.write(dir.path() / (stem + "-00002-of-00003.gguf"));
  GgufWriter third = shard(2);
  third.tensor("blk.64.nextn.eh_proj.weight", {512, 256}, GgmlType::f16)
      .tensor("blk.0.attn_qkv.weight", {256, 256}, GgmlType::q4_k);
  third.write(dir.path() / (stem + "-00003-of-00003.gguf"));
}

TEST(ModelFacts, SplitModelSumsTheTensorsOfEveryShard) {
  testing::TempDir dir;
  write_split_model(dir, "m");
  const auto facts = read_model(dir.path() / "m-00001-of-00003.gguf");
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_EQ(facts->split_count, 3u);
  EXPECT_EQ(facts->tensor_count, 5u);
  EXPECT_EQ(facts->weight_bytes, 272000u + 210000 + 131072 + 262144 + 36864);
  EXPECT_EQ(facts->mtp_weight_bytes, 262144u);
  // Output head and both main-stack tensors; not the embedding (a row lookup), not MTP.
  EXPECT_EQ(facts->bytes_read_per_token, 210000u + 131072 + 36864);
  EXPECT_FALSE(facts->tied_output);
}

TEST(ModelFacts, SplitModelWithAMissingShardIsRefusedNamingIt) {
  testing::TempDir dir;
  write_split_model(dir, "m");
  std::filesystem::remove(dir.path() / "m-00002-of-00003.gguf");
  const auto facts = read_model(dir.path() / "m-00001-of-00003.gguf");
  ASSERT_FALSE(facts);
  EXPECT_NE(facts.error().message.find("shard 2 of 3 is missing"), std::string::npos)
      << facts.error().message;
  EXPECT_NE(facts.error().message.find("m-00002-of-00003.gguf"), std::string::npos);
}

TEST(ModelFacts, SplitModelMustBeGivenByItsFirstShardUnderItsOwnName) {
  testing::TempDir dir;
  write_split_model(dir, "m");
  const auto second = read_model(dir.path() / "m-00002-of-00003.gguf");
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("give the first shard"), std::string::npos)
      << second.error().message;
  std::filesystem::rename(dir.path() / "m-00001-of-00003.gguf", dir.path() / "renamed.gguf");
  const auto renamed = read_model(dir.path() / "renamed.gguf");
  ASSERT_FALSE(renamed);
  EXPECT_NE(renamed.error().message.find("-00001-of-00003.gguf"), std::string::npos)
      << renamed.error().message;
}

TEST(ModelFacts, ShardOfAnotherModelIsRefused) {
  testing::TempDir dir;
  write_split_model(dir, "m");
  GgufWriter stray;
  stray.add("split.no", testing::gguf_uint16(2)).add("split.count", testing::gguf_uint16(3));
  stray.write(dir.path() / "m-00002-of-00003.gguf");
  const auto facts = read_model(dir.path() / "m-00001-of-00003.gguf");
  ASSERT_FALSE(facts);
  EXPECT_NE(facts.error().message.find("split.no 2"), std::string::npos) << facts.error().message;
}

}  // namespace
}  // namespace gb10tune::model
