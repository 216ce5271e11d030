// The scheduler's copies under partial offload (plan/split_copies): which ops copy their weight,
// what a copy weighs, where each input is copied, and the KV cache copies of a CPU block.
#include "gb10tune/plan/split_copies.hpp"

#include <gtest/gtest.h>

namespace gb10tune::plan {
namespace {

// Three blocks with a K/V width of 1024 and one weight each that the tests look up.
model::ModelFacts three_block_model() {
  model::ModelFacts model;
  model.embedding_length = 4096;
  model.block_count = 3;
  model.main_layer_count = 3;
  model.v_width_max = 2048;
  for (std::uint32_t il = 0; il < 3; ++il) {
    model::LayerFacts layer;
    layer.index = il;
    layer.head_count = 32;
    layer.head_count_kv = 8;
    layer.k_width = 1024;
    layer.v_width = 1024;
    model.layers.push_back(layer);
    model::ModelFacts::TensorSpan span;
    span.name = "blk." + std::to_string(il) + ".attn_q.weight";
    span.bytes = (il + 1) * 1000000ull;
    span.layer = il;
    model.tensor_spans.push_back(span);
  }
  model::ModelFacts::TensorSpan output;
  output.name = "output.weight";
  output.bytes = 7000000;
  output.layer = model::ModelFacts::kOutputLayer;
  model.tensor_spans.push_back(output);
  return model;
}

GraphShape offload_shape(std::uint32_t host_blocks, bool host_output) {
  GraphShape shape;
  shape.full_cells = 8192;
  shape.streams = 2;
  shape.host_blocks = host_blocks;
  shape.host_output = host_output;
  return shape;
}

// The expected high-water marks below are worked out by hand: the allocators here align every
// tensor to 128 bytes, as ggml's CUDA buffer type does
// (ggml_backend_cuda_buffer_type_get_alignment), so 2,000,000 and 4,000,000 bytes (multiples of
// 128) take themselves, 1,000 bytes take 1,024, 7,000,000 take 7,000,064 (54,688 x 128), 20,000
// take 20,096, 100,000 take 100,096 and 200,000 take 200,064.

TEST(SplitCopies, OnlyCpuBlocksCopyAndOnlyForBatchesOfThirtyTwoRows) {
  const model::ModelFacts model = three_block_model();
  const SplitCopies copies(model, offload_shape(2, false), 512, {});
  EXPECT_TRUE(copies.any());
  EXPECT_TRUE(copies.copies(0, 512));
  EXPECT_TRUE(copies.copies(1, 32));
  EXPECT_FALSE(copies.copies(1, 31));   // a batch below op offload's rows stays on the CPU
  EXPECT_FALSE(copies.copies(2, 512));  // a GPU block reads its own weights
  EXPECT_FALSE(copies.copies(kOutputBlock, 512));
  EXPECT_TRUE(SplitCopies(model, offload_shape(3, true), 512, {}).copies(kOutputBlock, 32));
  // A micro-batch below 32 rows: nothing of the CPU blocks runs on the GPU.
  const SplitCopies small(model, offload_shape(2, false), 16, {});
  EXPECT_FALSE(small.any());
  EXPECT_FALSE(small.copies(0, 512));
  EXPECT_FALSE(SplitCopies(model, offload_shape(0, false), 512, {}).any());
  EXPECT_TRUE(copies.has(1, "attn_q"));
  EXPECT_FALSE(copies.has(1, "attn_q_norm"));  // a tensor the model lacks
  EXPECT_FALSE(copies.has(2, "attn_q"));       // a GPU block's tensors are not copied
}

TEST(SplitCopies, AWeightCopyIsTheTensorsBytesFreedAfterItsOp) {
  const model::ModelFacts model = three_block_model();
  SplitCopies copies(model, offload_shape(2, true), 512, {});
  GraphAllocator a(128);
  copies.before(a, 1, "attn_q", 512);
  EXPECT_EQ(a.high_water(), 2000000u);
  a.place("Q", 1000);  // the op's output goes above the copy
  copies.after(a, 1, 512);
  EXPECT_EQ(a.high_water(), 2001024u);  // 2,000,000 + 1,024
  copies.before(a, 1, "attn_q", 512);   // the freed block takes the next copy
  copies.after(a, 1, 512);
  EXPECT_EQ(a.high_water(), 2001024u);
  copies.before(a, 1, "ffn_up", 512);  // a tensor the model lacks weighs nothing
  copies.after(a, 1, 512);
  copies.before(a, 2, "attn_q", 512);  // a GPU block: no copy
  copies.after(a, 2, 512);
  EXPECT_EQ(a.high_water(), 2001024u);
  GraphAllocator head(128);
  copies.before(head, kOutputBlock, "output", 64);
  EXPECT_EQ(head.high_water(), 7000064u);
}

TEST(SplitCopies, EachInputIsCopiedOnceByTheFirstSplitThatReadsIt) {
  const model::ModelFacts model = three_block_model();
  const InputCopies inputs{1000, 20000, 100000, 200000, 4000000};
  {
    SplitCopies copies(model, offload_shape(2, false), 512, inputs);
    GraphAllocator a(128);
    copies.inputs_at(a, SplitPoint::first_query, 0);
    copies.inputs_at(a, SplitPoint::first_query, 1);  // already there
    EXPECT_EQ(a.high_water(), 1024u);
    copies.inputs_at(a, SplitPoint::first_attention, 0);
    EXPECT_EQ(a.high_water(), 21120u);                     // 1,024 + 20,096
    copies.inputs_at(a, SplitPoint::last_output_proj, 2);  // GPU blocks follow: not here
    copies.inputs_at(a, SplitPoint::last_host_down, 0);    // not the last CPU block
    EXPECT_EQ(a.high_water(), 21120u);
    copies.inputs_at(a, SplitPoint::last_host_down, 1);  // runs on through the GPU blocks
    // 1,024 + 20,096 + 100,096 + 200,064 + 4,000,000
    EXPECT_EQ(a.high_water(), 4321280u);
  }
  {
    // Every block on the CPU: the cache writes stay there, the output ids come with the last
    // block's output projection.
    SplitCopies copies(model, offload_shape(3, true), 512, inputs);
    GraphAllocator a(128);
    copies.inputs_at(a, SplitPoint::last_host_down, 2);
    EXPECT_EQ(a.high_water(), 0u);
    copies.inputs_at(a, SplitPoint::last_output_proj, 1);
    EXPECT_EQ(a.high_water(), 0u);
    copies.inputs_at(a, SplitPoint::last_output_proj, 2);
    EXPECT_EQ(a.high_water(), 4000000u);
  }
  SplitCopies none(model, offload_shape(2, false), 16, inputs);  // nothing offloaded
  GraphAllocator a(128);
  none.inputs_at(a, SplitPoint::first_query, 0);
  EXPECT_EQ(a.high_water(), 0u);
}

TEST(SplitCopies, AKvCacheCopyIsTheLayersWholeCacheInItsType) {
  const model::ModelFacts model = three_block_model();
  GraphShape shape = offload_shape(2, false);
  EXPECT_EQ(SplitCopies(model, shape, 512, {}).cache_copy_bytes(model.layers[0], false),
            32ull << 20);  // 1024 f16 values × 8192 cells × 2 streams
  shape.cache_k = gguf::GgmlType::q8_0;
  EXPECT_EQ(SplitCopies(model, shape, 512, {}).cache_copy_bytes(model.layers[0], false),
            1088ull * 8192 * 2);  // 32 blocks of 34 bytes a row
  EXPECT_EQ(SplitCopies(model, shape, 512, {}).cache_copy_bytes(model.layers[0], true),
            32ull << 20);
  shape.flash_attention = false;  // V stored transposed at the widest layer's width
  EXPECT_EQ(SplitCopies(model, shape, 512, {}).cache_copy_bytes(model.layers[0], true),
            64ull << 20);
  shape.streams = 1;
  EXPECT_EQ(SplitCopies(model, shape, 512, {}).cache_copy_bytes(model.layers[0], true),
            32ull << 20);
}

}  // namespace
}  // namespace gb10tune::plan
