#include <gtest/gtest.h>

#include <chrono>

#include "gb10tune/gguf/gguf_file.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::gguf {
namespace {

using testing::GgufWriter;

std::span<const std::uint8_t> as_span(const std::string& bytes) {
  return {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()};
}

// A writer with one key of every scalar type and a string.
GgufWriter every_scalar(std::uint32_t version) {
  GgufWriter w(version);
  w.add("u8", testing::gguf_uint8(200))
      .add("i8", testing::gguf_int8(-100))
      .add("u16", testing::gguf_uint16(60000))
      .add("i16", testing::gguf_int16(-30000))
      .add("u32", testing::gguf_uint32(4000000000u))
      .add("i32", testing::gguf_int32(-2000000000))
      .add("u64", testing::gguf_uint64(18000000000000000000ull))
      .add("i64", testing::gguf_int64(-9000000000000000000ll))
      .add("f32", testing::gguf_float32(1.5f))
      .add("f64", testing::gguf_float64(-2.25))
      .add("yes", testing::gguf_bool(true))
      .add("no", testing::gguf_bool(false))
      .add("text", testing::gguf_string("qwen35 ☃"))
      .add("empty", testing::gguf_string(""));
  return w;
}

void expect_every_scalar(const GgufFile& file) {
  EXPECT_EQ(file.metadata().size(), 14u);
  EXPECT_EQ(file.get_uint("u8").value_or(0), 200u);
  EXPECT_EQ(file.get_int("i8").value_or(0), -100);
  EXPECT_EQ(file.get_uint("u16").value_or(0), 60000u);
  EXPECT_EQ(file.get_int("i16").value_or(0), -30000);
  EXPECT_EQ(file.get_uint("u32").value_or(0), 4000000000u);
  EXPECT_EQ(file.get_int("i32").value_or(0), -2000000000);
  EXPECT_EQ(file.get_uint("u64").value_or(0), 18000000000000000000ull);
  EXPECT_EQ(file.get_int("i64").value_or(0), -9000000000000000000ll);
  EXPECT_EQ(file.get_float("f32").value_or(0), 1.5);
  EXPECT_EQ(file.get_float("f64").value_or(0), -2.25);
  EXPECT_TRUE(file.get_bool("yes").value_or(false));
  EXPECT_FALSE(file.get_bool("no").value_or(true));
  EXPECT_EQ(file.get_string("text").value_or(""), "qwen35 ☃");
  EXPECT_EQ(file.get_string("empty").value_or("x"), "");
  EXPECT_EQ(file.find("u8")->value.type(), ValueType::uint8);
  EXPECT_EQ(file.find("i64")->value.type(), ValueType::int64);
  EXPECT_EQ(file.find("f32")->value.type(), ValueType::float32);
  EXPECT_EQ(file.find("yes")->value.type(), ValueType::boolean);
  // Signed values that are not negative read as unsigned, and the reverse.
  EXPECT_EQ(file.get_int("u32").value_or(0), 4000000000);
  EXPECT_FALSE(file.get_uint("i8"));
  EXPECT_FALSE(file.get_int("u64"));  // above INT64_MAX
}

TEST(GgufReader, EveryScalarTypeRoundTripsInVersion3And2) {
  for (const std::uint32_t version : {3u, 2u}) {
    testing::TempDir dir;
    const auto path = dir.path() / "scalars.gguf";
    every_scalar(version).write(path);
    const auto file = read_gguf(path);
    ASSERT_TRUE(file) << file.error().message;
    EXPECT_EQ(file->version(), version);
    EXPECT_EQ(file->source(), path.string());
    EXPECT_TRUE(file->tensors().empty());
    expect_every_scalar(*file);

    const std::string bytes = every_scalar(version).bytes();
    const auto memory = parse_gguf(as_span(bytes), "memory.gguf");
    ASSERT_TRUE(memory) << memory.error().message;
    expect_every_scalar(*memory);
    EXPECT_EQ(memory->data_offset(), bytes.size());
  }
}

TEST(GgufReader, ArraysOfEveryKindRoundTrip) {
  using testing::gguf_array;
  GgufWriter w;
  w.add("u32s", testing::gguf_uint32_array({1, 2, 3}))
      .add("i32s", testing::gguf_int32_array({-1, 0, 7}))
      .add("bools", testing::gguf_bool_array({true, false, true}))
      .add("strings", testing::gguf_string_array({"a", "", "long string"}))
      .add("f32s", gguf_array(ValueType::float32,
                              {testing::gguf_float32(0.5f), testing::gguf_float32(-1.0f)}))
      .add("u64s", gguf_array(ValueType::uint64, {testing::gguf_uint64(1ull << 63)}))
      .add("empty", gguf_array(ValueType::int16, {}))
      .add("nested", gguf_array(ValueType::array,
                                {gguf_array(ValueType::uint8, {testing::gguf_uint8(9)}),
                                 gguf_array(ValueType::string, {testing::gguf_string("x")}),
                                 gguf_array(ValueType::array, {gguf_array(ValueType::int8, {})})}));
  const std::string bytes = w.bytes();
  const auto file = parse_gguf(as_span(bytes), "arrays.gguf");
  ASSERT_TRUE(file) << file.error().message;

  const Array* u32s = file->get_array("u32s").value_or(nullptr);
  ASSERT_NE(u32s, nullptr);
  EXPECT_EQ(u32s->element_type(), ValueType::uint32);
  ASSERT_EQ(u32s->size(), 3u);
  EXPECT_EQ(u32s->uint_at(2), 3u);
  EXPECT_EQ(u32s->uint_at(3), std::nullopt);

  const Array* i32s = *file->get_array("i32s");
  EXPECT_EQ(i32s->int_at(0), -1);
  EXPECT_EQ(i32s->uint_at(0), std::nullopt);
  EXPECT_EQ(i32s->uint_at(2), 7u);

  const Array* bools = *file->get_array("bools");
  EXPECT_EQ(bools->bool_at(0), true);
  EXPECT_EQ(bools->bool_at(1), false);
  EXPECT_EQ(bools->uint_at(2), 1u);

  const Array* strings = *file->get_array("strings");
  ASSERT_EQ(strings->size(), 3u);
  EXPECT_EQ(*strings->string_at(2), "long string");
  EXPECT_EQ(*strings->string_at(1), "");
  EXPECT_EQ(strings->string_at(3), nullptr);

  const Array* floats = *file->get_array("f32s");
  EXPECT_EQ(floats->float_at(0), 0.5);
  EXPECT_EQ(floats->float_at(1), -1.0);

  EXPECT_EQ((*file->get_array("u64s"))->uint_at(0), 1ull << 63);
  EXPECT_EQ((*file->get_array("u64s"))->int_at(0), std::nullopt);
  EXPECT_TRUE((*file->get_array("empty"))->empty());

  const Array* nested = *file->get_array("nested");
  EXPECT_EQ(nested->element_type(), ValueType::array);
  ASSERT_EQ(nested->size(), 3u);
  EXPECT_EQ(nested->array_at(0)->uint_at(0), 9u);
  EXPECT_EQ(*nested->array_at(1)->string_at(0), "x");
  EXPECT_EQ(nested->array_at(2)->array_at(0)->element_type(), ValueType::int8);
  EXPECT_EQ(file->find("nested")->value.summary(), "[3 × array]");
}

TEST(GgufReader, TensorInfosShapesSizesAndDataSection) {
  GgufWriter w;
  w.add("general.architecture", testing::gguf_string("llama"))
      .tensor("token_embd.weight", {4096, 32000}, GgmlType::q4_k)
      .tensor("blk.0.attn_norm.weight", {4096}, GgmlType::f32)
      .tensor("blk.0.attn_q.weight", {4096, 4096}, GgmlType::q8_0)
      .tensor("odd", {7, 3}, GgmlType::f16)
      .tensor("scalar", {}, GgmlType::i32);
  testing::TempDir dir;
  const auto path = dir.path() / "model.gguf";
  const std::uint64_t size = w.write(path);
  const auto file = read_gguf(path);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->file_size(), size);
  EXPECT_EQ(file->alignment(), 32u);
  EXPECT_EQ(file->data_offset() % 32, 0u);
  ASSERT_EQ(file->tensors().size(), 5u);

  const TensorInfo* embd = file->find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->n_dims, 2u);
  EXPECT_EQ(embd->shape[0], 4096u);
  EXPECT_EQ(embd->shape[1], 32000u);
  EXPECT_EQ(embd->shape[2], 1u);
  EXPECT_EQ(embd->type, GgmlType::q4_k);
  EXPECT_EQ(embd->elements, 4096ull * 32000);
  EXPECT_EQ(embd->bytes, 4096ull * 32000 / 256 * 144);
  EXPECT_EQ(embd->offset, 0u);

  const TensorInfo* q = file->find_tensor("blk.0.attn_q.weight");
  EXPECT_EQ(q->bytes, 4096ull * 4096 / 32 * 34);
  EXPECT_EQ(q->offset, embd->bytes + 4096 * 4);  // both sizes are multiples of 32
  const TensorInfo* odd = file->find_tensor("odd");
  EXPECT_EQ(odd->bytes, 42u);
  const TensorInfo* scalar = file->find_tensor("scalar");
  EXPECT_EQ(scalar->n_dims, 0u);
  EXPECT_EQ(scalar->elements, 1u);
  EXPECT_EQ(scalar->offset, odd->offset + 64);  // 42 padded to 32
  EXPECT_EQ(file->tensor_bytes(), embd->bytes + 4096 * 4 + q->bytes + 42 + 4);
  EXPECT_EQ(file->data_size(), scalar->offset + 32);
  EXPECT_EQ(file->find_tensor("missing"), nullptr);
}

TEST(GgufReader, CustomAlignmentPadsTheDataSectionAndOffsets) {
  GgufWriter w;
  w.alignment(256).tensor("a", {10}, GgmlType::f32).tensor("b", {10}, GgmlType::f32);
  const std::string bytes = w.bytes();
  const auto file = parse_gguf(as_span(bytes), "aligned.gguf");
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->alignment(), 256u);
  EXPECT_EQ(file->data_offset() % 256, 0u);
  EXPECT_EQ(file->find_tensor("b")->offset, 256u);
  EXPECT_EQ(file->data_size(), 512u);
}

TEST(GgufReader, TypedAccessorsNameTheKeyAndTheActualType) {
  GgufWriter w;
  w.add("name", testing::gguf_string("x"))
      .add("count", testing::gguf_uint32(3))
      .add("neg", testing::gguf_int32(-3))
      .add("heads", testing::gguf_int32_array({8, 8, 4}));
  const std::string bytes = w.bytes();
  const auto file = parse_gguf(as_span(bytes), "typed.gguf");
  ASSERT_TRUE(file) << file.error().message;

  const auto wrong = file->get_uint("name");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("typed.gguf"), std::string::npos);
  EXPECT_NE(wrong.error().message.find("'name'"), std::string::npos);
  EXPECT_NE(wrong.error().message.find("is a string"), std::string::npos) << wrong.error().message;
  EXPECT_NE(wrong.error().message.find("offset 24"), std::string::npos) << wrong.error().message;

  const auto missing = file->get_string("general.architecture");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("'general.architecture' is missing"), std::string::npos);

  EXPECT_FALSE(file->get_float("count"));
  EXPECT_FALSE(file->get_bool("count"));
  EXPECT_FALSE(file->get_array("count"));
  EXPECT_FALSE(file->get_string("count"));
  const auto negative = file->get_uint("neg");
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("int32 (-3)"), std::string::npos)
      << negative.error().message;

  EXPECT_EQ(file->get_uint_or("absent", 7).value_or(0), 7u);
  EXPECT_FALSE(file->get_uint_or("name", 7));
  EXPECT_EQ(file->get_string_or("absent", "d").value_or(""), "d");

  EXPECT_EQ(file->get_uint_per_layer("count", 4).value_or({}),
            (std::vector<std::uint64_t>{3, 3, 3, 3}));
  EXPECT_EQ(file->get_uint_per_layer("heads", 3).value_or({}),
            (std::vector<std::uint64_t>{8, 8, 4}));
  const auto short_array = file->get_uint_per_layer("heads", 4);
  ASSERT_FALSE(short_array);
  EXPECT_NE(short_array.error().message.find("has 3 elements, expected one per layer (4)"),
            std::string::npos)
      << short_array.error().message;
  EXPECT_FALSE(file->get_uint_per_layer("name", 4));
  EXPECT_FALSE(file->get_uint_per_layer("neg", 4));
}

TEST(GgufReader, HeaderLargerThanTheReadWindowReadsLikeMemory) {
  // A tokenizer-sized header (several MiB) crosses many 1 MiB read windows.
  std::vector<std::string> tokens;
  for (int i = 0; i < 50000; ++i) {
    tokens.push_back("token-" + std::to_string(i) + std::string(64 + i % 23, 'x'));
  }
  GgufWriter w;
  w.add("tokenizer.ggml.tokens", testing::gguf_string_array(tokens))
      .add("after", testing::gguf_uint32(42))
      .tensor("t", {32}, GgmlType::q8_0);
  testing::TempDir dir;
  const auto path = dir.path() / "big-header.gguf";
  w.write(path);
  const auto file = read_gguf(path);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_GT(file->data_offset(), 4u << 20);
  const Array* read_tokens = *file->get_array("tokenizer.ggml.tokens");
  ASSERT_EQ(read_tokens->size(), tokens.size());
  EXPECT_EQ(*read_tokens->string_at(12345), tokens[12345]);
  EXPECT_EQ(*read_tokens->string_at(49999), tokens[49999]);
  EXPECT_EQ(file->get_uint("after").value_or(0), 42u);
  EXPECT_EQ(file->find_tensor("t")->bytes, 34u);

  const std::string bytes = w.bytes();
  const auto memory = parse_gguf(as_span(bytes), "memory");
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->data_offset(), file->data_offset());
}

TEST(GgufReader, SparseSeventeenGigabyteModelHeaderReadsWithoutTouchingData) {
  // 64 blocks of K-quant tensors: 18 GB of (sparse) tensor data behind a small header.
  GgufWriter w;
  w.add("general.architecture", testing::gguf_string("qwen35"));
  testing::add_large_model_tensors(w);
  testing::TempDir dir;
  const auto path = dir.path() / "sparse-17g.gguf";
  const std::uint64_t size = w.write(path);
  ASSERT_GT(size, 18'000'000'000ull);

  const auto start = std::chrono::steady_clock::now();
  const auto file = read_gguf(path);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->file_size(), size);
  EXPECT_EQ(file->tensors().size(), 321u);
  EXPECT_EQ(file->tensor_bytes(), 18'016'665'600ull);
  EXPECT_EQ(file->data_offset() + file->data_size(), size);
  // The speed claim belongs to bench/gguf_header_bench.cpp; this only guards against reading
  // the data section (which would take far longer than this, even when sparse).
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

// The largest real tokenizers (gemma3's 262,144 tokens; 500,000 merges, more than any BPE
// vocabulary ships) parse far under the header's memory budget (docs/gguf-reader.md).
TEST(GgufReader, TheLargestRealVocabularyFitsTheMemoryBudgetWithMargin) {
  GgufWriter w;
  testing::add_large_vocabulary(w, 262'144, 500'000);
  const std::string bytes = w.bytes();
  const auto file = parse_gguf(as_span(bytes), "vocab.gguf");
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ((*file->get_array("tokenizer.ggml.merges"))->size(), 500'000u);
  // At least every string object; at most a fifth of the budget.
  EXPECT_GT(file->memory_bytes(), (262'144u + 500'000u) * sizeof(std::string));
  EXPECT_LT(file->memory_bytes(), kMaxHeaderMemory / 5) << file->memory_bytes();
  RecordProperty("memory_bytes", std::to_string(file->memory_bytes()));
  RecordProperty("file_bytes", std::to_string(bytes.size()));
}

TEST(GgufReader, MissingAndNonRegularFilesNameThePath) {
  testing::TempDir dir;
  const auto missing = read_gguf(dir.path() / "absent.gguf");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("absent.gguf"), std::string::npos);
  EXPECT_NE(missing.error().message.find("No such file"), std::string::npos);
  const auto directory = read_gguf(dir.path());
  ASSERT_FALSE(directory);
  EXPECT_NE(directory.error().message.find("not a regular file"), std::string::npos);
}

TEST(GgmlTypeTable, MatchesLlamaCppIdsNamesAndBlockSizes) {
  struct Row {
    std::uint32_t id;
    std::string_view name;
    std::uint32_t block;
    std::uint32_t bytes;
  };
  // From ggml.h, ggml.c type_traits and sizeof(block_*) of ggml-common.h (llama.cpp 3f545be).
  const std::vector<Row> expected{
      {0, "f32", 1, 4},         {1, "f16", 1, 2},         {2, "q4_0", 32, 18},
      {3, "q4_1", 32, 20},      {6, "q5_0", 32, 22},      {7, "q5_1", 32, 24},
      {8, "q8_0", 32, 34},      {9, "q8_1", 32, 36},      {10, "q2_K", 256, 84},
      {11, "q3_K", 256, 110},   {12, "q4_K", 256, 144},   {13, "q5_K", 256, 176},
      {14, "q6_K", 256, 210},   {15, "q8_K", 256, 292},   {16, "iq2_xxs", 256, 66},
      {17, "iq2_xs", 256, 74},  {18, "iq3_xxs", 256, 98}, {19, "iq1_s", 256, 50},
      {20, "iq4_nl", 32, 18},   {21, "iq3_s", 256, 110},  {22, "iq2_s", 256, 82},
      {23, "iq4_xs", 256, 136}, {24, "i8", 1, 1},         {25, "i16", 1, 2},
      {26, "i32", 1, 4},        {27, "i64", 1, 8},        {28, "f64", 1, 8},
      {29, "iq1_m", 256, 56},   {30, "bf16", 1, 2},       {34, "tq1_0", 256, 54},
      {35, "tq2_0", 256, 66},   {39, "mxfp4", 32, 17},    {40, "nvfp4", 64, 36},
      {41, "q1_0", 128, 18},    {42, "q2_0", 64, 18},
  };
  ASSERT_EQ(ggml_types().size(), expected.size());
  for (const Row& row : expected) {
    const GgmlTypeInfo* info = ggml_type_from_id(row.id);
    ASSERT_NE(info, nullptr) << row.name;
    EXPECT_EQ(info->name, row.name);
    EXPECT_EQ(info->block_size, row.block) << row.name;
    EXPECT_EQ(info->block_bytes, row.bytes) << row.name;
    EXPECT_EQ(ggml_type_from_name(row.name), info);
  }
  EXPECT_EQ(ggml_type_from_name("Q8_0")->type, GgmlType::q8_0);
  EXPECT_EQ(ggml_type_from_name("Q4_K")->type, GgmlType::q4_k);
  EXPECT_EQ(ggml_type_from_name("q4_k_m"), nullptr);
  for (const std::uint32_t removed : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
    EXPECT_EQ(ggml_type_from_id(removed), nullptr);
    EXPECT_FALSE(removed_ggml_type_name(removed).empty());
  }
  EXPECT_EQ(ggml_type_from_id(43), nullptr);
  EXPECT_EQ(ggml_bytes(GgmlType::f16, 256), 512u);
  EXPECT_EQ(ggml_bytes(GgmlType::q8_0, 1024), 1088u);
  EXPECT_EQ(ggml_bytes(GgmlType::q4_0, 100), std::nullopt);
  EXPECT_EQ(ggml_bytes(GgmlType::f64, 1ull << 62), std::nullopt);
}

}  // namespace
}  // namespace gb10tune::gguf
