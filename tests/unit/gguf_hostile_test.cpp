// Hostile GGUF input: every malformed field must be a clear Error naming the file and the byte
// offset — never a crash, a hang or an allocation beyond what the file holds.
#include <gtest/gtest.h>
#include <unistd.h>

#include "gb10tune/gguf/gguf_file.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::gguf {
namespace {

using testing::GgufWriter;
using testing::le32;
using testing::le64;

constexpr const char* kName = "hostile.gguf";

Expected<GgufFile> parse(const std::string& bytes) {
  return parse_gguf({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, kName);
}

// Parsing `bytes` fails with a message that starts with "hostile.gguf: offset <offset>:" and
// contains `text`.
void expect_rejected(const std::string& bytes, std::uint64_t offset, const std::string& text) {
  const auto file = parse(bytes);
  ASSERT_FALSE(file) << "accepted; expected: " << text;
  const std::string& message = file.error().message;
  const std::string prefix = std::string(kName) + ": offset " + std::to_string(offset) + ": ";
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
  EXPECT_NE(message.find(text), std::string::npos) << message;
}

// Offset of the value (after the type) of the first metadata entry `key` written by `w`.
std::uint64_t value_offset(const GgufWriter& w, const std::string& key) {
  return w.layout().key_offsets.at(key) + 8 + key.size() + 4;
}

TEST(GgufHostile, EmptyAndTooShortFiles) {
  expect_rejected("", 0, "the file is empty");
  expect_rejected("GGU", 0, "only 3 bytes long");
}

TEST(GgufHostile, WrongMagic) {
  expect_rejected(GgufWriter().magic("GGML").bytes(), 0, "not a GGUF file: it starts with 'GGML'");
  expect_rejected(std::string("\x89PNG\r\n\x1a\n", 8), 0, "starts with '.PNG'");
}

TEST(GgufHostile, UnsupportedVersions) {
  expect_rejected(GgufWriter(1).bytes(), 4, "GGUF version 1 is no longer supported");
  expect_rejected(GgufWriter(4).bytes(), 4, "unsupported GGUF version 4");
  expect_rejected(GgufWriter(0).bytes(), 4, "unsupported GGUF version 0");
  expect_rejected(GgufWriter(0x03000000).bytes(), 4, "big-endian");
}

TEST(GgufHostile, EveryTruncationOfAValidFileIsAnError) {
  GgufWriter w;
  w.add("general.architecture", testing::gguf_string("llama"))
      .add("llama.heads", testing::gguf_int32_array({1, 2, 3}))
      .add("nested",
           testing::gguf_array(ValueType::array, {testing::gguf_string_array({"a", "bc"})}))
      .add("pi", testing::gguf_float64(3.14))
      .tensor("a", {64}, GgmlType::q8_0)
      .tensor("b", {3, 2}, GgmlType::f32);
  const std::string bytes = w.bytes();
  const auto whole = parse(bytes);
  ASSERT_TRUE(whole);
  // The padding after the last tensor's data is optional (llama.cpp does not need it).
  const TensorInfo& last = whole->tensors().back();
  const std::uint64_t end = whole->data_offset() + last.offset + last.bytes;
  ASSERT_LT(end, bytes.size());
  EXPECT_TRUE(parse(bytes.substr(0, end)));
  for (std::size_t size = 0; size < end; ++size) {
    const auto file = parse(bytes.substr(0, size));
    ASSERT_FALSE(file) << "a prefix of " << size << " bytes was accepted";
    const std::string& message = file.error().message;
    EXPECT_EQ(message.rfind("hostile.gguf: offset ", 0), 0u) << message;
    const bool explained = message.find("truncated") != std::string::npos ||
                           message.find("too short") != std::string::npos ||
                           message.find("empty") != std::string::npos;
    EXPECT_TRUE(explained) << message;
  }
}

TEST(GgufHostile, AbsurdTensorCount) {
  expect_rejected(GgufWriter().tensor_count(1ull << 40).bytes(), 8,
                  "tensor count 1099511627776 cannot fit");
}

TEST(GgufHostile, AbsurdMetadataCount) {
  expect_rejected(GgufWriter().metadata_count(1ull << 60).bytes(), 16,
                  "metadata count 1152921504606846976 cannot fit");
}

TEST(GgufHostile, StringLengthOfTwoToTheSixtyThree) {
  GgufWriter w;
  w.add("general.name", testing::gguf_raw(8, le64(9223372036854775807ull) + "abc"));
  const std::string bytes = w.bytes();
  expect_rejected(bytes, value_offset(w, "general.name"),
                  "string length 9223372036854775807 (the value of 'general.name') exceeds the "
                  "file size " +
                      std::to_string(bytes.size()));
}

TEST(GgufHostile, StringRunningPastTheEnd) {
  GgufWriter w;
  w.add("general.name", testing::gguf_raw(8, le64(10) + "abc"));
  expect_rejected(w.bytes(), value_offset(w, "general.name"),
                  "string length 10 (the value of 'general.name') runs past the end");
}

TEST(GgufHostile, KeyLengthBeyondTheFile) {
  std::string bytes = GgufWriter().add("k", testing::gguf_uint8(1)).bytes();
  testing::patch_u64(bytes, 24, 1ull << 62);
  expect_rejected(bytes, 24, "string length 4611686018427387904 (metadata key 0)");
}

TEST(GgufHostile, ArrayOfTwoToTheSixtyElements) {
  GgufWriter w;
  w.add("big", testing::gguf_raw(9, le32(4) + le64(1ull << 60)));
  expect_rejected(w.bytes(), value_offset(w, "big") + 4,
                  "array of 1152921504606846976 uint32 elements");
}

TEST(GgufHostile, ArrayOfManyStringsIsBoundedByTheFile) {
  GgufWriter w;
  w.add("tokens", testing::gguf_raw(9, le32(8) + le64(1000) + le64(0)));
  expect_rejected(w.bytes(), value_offset(w, "tokens") + 4,
                  "array of 1000 string elements, which needs at least 8 bytes");
}

TEST(GgufHostile, UnknownValueTypes) {
  GgufWriter w;
  w.add("weird", testing::gguf_raw(13, ""));
  expect_rejected(w.bytes(), value_offset(w, "weird") - 4, "key 'weird' has unknown value type 13");

  GgufWriter inner;
  inner.add("weird", testing::gguf_raw(9, le32(77) + le64(0)));
  expect_rejected(inner.bytes(), value_offset(inner, "weird"), "unknown value type 77");
}

TEST(GgufHostile, ArraysNestedTooDeep) {
  testing::GgufValueBytes value = testing::gguf_array(ValueType::uint8, {});
  for (int i = 0; i < 12; ++i) {
    value = testing::gguf_array(ValueType::array, {value});
  }
  GgufWriter w;
  w.add("deep", value);
  const auto file = parse(w.bytes());
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("nests arrays more than 8 levels deep"), std::string::npos)
      << file.error().message;

  testing::GgufValueBytes fine = testing::gguf_array(ValueType::uint8, {});
  for (int i = 0; i < 7; ++i) {
    fine = testing::gguf_array(ValueType::array, {fine});
  }
  EXPECT_TRUE(parse(GgufWriter().add("ok", fine).bytes()));
}

TEST(GgufHostile, EmptyAndDuplicateKeys) {
  expect_rejected(GgufWriter().add("", testing::gguf_uint8(1)).bytes(), 24,
                  "metadata key 0 is empty");
  GgufWriter w;
  w.add("a", testing::gguf_uint8(1)).add("a", testing::gguf_uint8(2));
  expect_rejected(w.bytes(), 24 + 8 + 1 + 4 + 1, "duplicate key 'a' (first at offset 24)");
}

TEST(GgufHostile, DuplicateTensorNames) {
  GgufWriter w;
  w.tensor("t", {4}, GgmlType::f32).tensor("t", {4}, GgmlType::f32);
  const std::uint64_t second = 24 + (8 + 1 + 4 + 8 + 4 + 8);
  expect_rejected(w.bytes(), second, "duplicate tensor name 't' (first at offset 24)");
}

TEST(GgufHostile, TooManyDimensions) {
  GgufWriter w;
  w.tensor("t", {1, 1, 1, 1, 1}, GgmlType::f32);
  expect_rejected(w.bytes(), 24 + 8 + 1, "tensor 't' has 5 dimensions; ggml supports at most 4");
}

TEST(GgufHostile, NegativeDimension) {
  GgufWriter w;
  w.tensor("t", {4, 1ull << 63}, GgmlType::f32);
  expect_rejected(w.bytes(), 24 + 8 + 1 + 4 + 8, "dimension 1 is 9223372036854775808");
}

TEST(GgufHostile, ShapeProductOverflow) {
  GgufWriter w;
  w.tensor("t", {1ull << 32, 1ull << 32}, GgmlType::f32);
  expect_rejected(w.bytes(), 24 + 8 + 1, "element count overflows int64");
}

TEST(GgufHostile, SizeInBytesOverflow) {
  GgufWriter w;
  w.tensor("t", {1ull << 31, 1ull << 31}, GgmlType::f64);
  expect_rejected(w.bytes(), 24 + 8 + 1 + 4 + 16, "size in bytes that overflows 64 bits");
}

TEST(GgufHostile, UnknownAndRemovedGgmlTypes) {
  GgufWriter unknown;
  unknown.tensor("t", {32}, 99u);
  expect_rejected(unknown.bytes(), 24 + 8 + 1 + 4 + 8, "tensor 't' has unknown ggml type 99");
  GgufWriter removed;
  removed.tensor("t", {32}, 31u);
  expect_rejected(removed.bytes(), 24 + 8 + 1 + 4 + 8,
                  "ggml type 31 (Q4_0_4_4), which ggml removed");
}

TEST(GgufHostile, RowNotAWholeNumberOfBlocks) {
  GgufWriter w;
  w.tensor("t", {100, 2}, GgmlType::q4_0);
  expect_rejected(w.bytes(), 24 + 8 + 1 + 4 + 16,
                  "rows of 100 elements, not a multiple of the block size 32");
}

TEST(GgufHostile, MisalignedTensorOffset) {
  GgufWriter w;
  w.tensor("t", {8}, GgmlType::f32, 16);
  expect_rejected(w.bytes(), 24, "data offset 16, not a multiple of the alignment 32");
}

TEST(GgufHostile, OverlappingOrOutOfOrderTensors) {
  GgufWriter w;
  w.tensor("a", {64}, GgmlType::f32).tensor("b", {64}, GgmlType::f32, 0);
  expect_rejected(w.bytes(), 24 + 33, "tensor 'b' has data offset 0 but 256 was expected");
}

TEST(GgufHostile, TensorPastTheEndOfTheFile) {
  GgufWriter w;
  w.tensor("a", {64}, GgmlType::f32).tensor("b", {1024}, GgmlType::f32);
  std::string bytes = w.bytes();
  bytes.resize(bytes.size() - 1);
  expect_rejected(bytes, 24 + 33, "tensor 'b' (4096 bytes at data offset 256) runs past the end");
}

TEST(GgufHostile, HugeTensorOffset) {
  GgufWriter w;
  w.tensor("a", {64}, GgmlType::f32, 0xFFFFFFFFFFFFFF00ull);
  expect_rejected(w.bytes(), 24,
                  "tensor 'a' has data offset 18446744073709551360 but 0 was expected");
}

TEST(GgufHostile, DataSectionStartingPastTheEnd) {
  GgufWriter w;
  w.tensor("t", {0}, GgmlType::f32);  // record ends at 24 + 33 = 57, data would start at 64
  std::string bytes = w.bytes();
  ASSERT_EQ(bytes.size(), 64u);
  bytes.resize(57);
  expect_rejected(bytes, 57, "the data section should start at offset 64");
}

TEST(GgufHostile, BadAlignments) {
  expect_rejected(GgufWriter().add("general.alignment", testing::gguf_uint64(32)).bytes(), 24,
                  "general.alignment is a uint64, but llama.cpp requires a uint32");
  expect_rejected(GgufWriter().alignment(48).bytes(), 24,
                  "general.alignment 48 is not a power of two");
  expect_rejected(GgufWriter().alignment(0).bytes(), 24,
                  "general.alignment 0 is not a power of two");
}

TEST(GgufHostile, TensorNameLongerThanGgmlAllows) {
  GgufWriter w;
  w.tensor(std::string(64, 'n'), {4}, GgmlType::f32);
  expect_rejected(w.bytes(), 24, "tensor 0 has a 64-byte name, longer than the 63 bytes");
  EXPECT_TRUE(parse(GgufWriter().tensor(std::string(63, 'n'), {4}, GgmlType::f32).bytes()));
}

TEST(GgufHostile, HugeCountsInASparseFileStayWithinTheHeaderCap) {
  // 1 GiB of zeros holds 2^26 empty strings; the header cap refuses them before any
  // allocation of that size.
  GgufWriter w;
  w.add("tokens", testing::gguf_raw(9, le32(8) + le64(1ull << 26)));
  testing::TempDir dir;
  const auto path = dir.path() / "sparse.gguf";
  testing::write_bytes(path, w.bytes());
  ASSERT_EQ(::truncate(path.c_str(), 1ll << 30), 0);
  const auto file = read_gguf(path);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("would take the header past 256 MiB"), std::string::npos)
      << file.error().message;
  EXPECT_NE(file.error().message.find(path.string()), std::string::npos);

  GgufWriter tensors;
  tensors.tensor_count(1ull << 29);
  testing::write_bytes(path, tensors.bytes());
  ASSERT_EQ(::truncate(path.c_str(), 17ll << 30), 0);
  const auto many = read_gguf(path);
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("would take the header past 256 MiB"), std::string::npos)
      << many.error().message;
}

// The hostile header, scaled down: 4 million empty nested arrays are 48 MB of file but
// ~350 MiB of parsed header (an Array node each). The memory budget refuses them before one is
// read, naming the file, the key and the limit.
TEST(GgufHostile, MillionsOfEmptyNestedArraysAreRefusedByTheMemoryBudget) {
  testing::TempDir dir;
  const auto path = dir.path() / "nested.gguf";
  testing::write_empty_nested_arrays(path, "nested", 4'000'000);
  const auto file = read_gguf(path);
  ASSERT_FALSE(file) << "4 million empty nested arrays were accepted";
  const std::string& message = file.error().message;
  EXPECT_EQ(message.rfind(path.string() + ": offset ", 0), 0u) << message;
  EXPECT_NE(message.find("the elements of 'nested'"), std::string::npos) << message;
  EXPECT_NE(message.find("past 256 MiB of memory"), std::string::npos) << message;
}

// Nested arrays small enough to pass one by one are charged as they are read: the third of
// three arrays of 1.2 million empty arrays (~100 MiB each in memory) passes the budget.
TEST(GgufHostile, NestedArraysAreChargedAsTheyAreRead) {
  constexpr std::uint64_t kInner = 1'200'000;
  std::string payload = le32(9) + le64(3);
  for (int i = 0; i < 3; ++i) {
    payload += le32(9) + le64(kInner) + std::string(kInner * 12, '\0');
  }
  GgufWriter w;
  w.add("nested", testing::gguf_raw(9, payload));
  const std::uint64_t third_count = value_offset(w, "nested") + 12 + 2 * (12 + kInner * 12) + 4;
  expect_rejected(w.bytes(), third_count,
                  "the elements of 'nested' would take the parsed header "
                  "past 256 MiB of memory");
}

// Within the budget the accounting counts every node: a million empty nested arrays parse and
// are charged at least their Array nodes.
TEST(GgufHostile, TheMemoryBudgetCountsEveryNode) {
  testing::TempDir dir;
  const auto path = dir.path() / "nested.gguf";
  testing::write_empty_nested_arrays(path, "nested", 1'000'000);
  const auto file = read_gguf(path);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->find("nested")->value.as_array()->size(), 1'000'000u);
  EXPECT_GE(file->memory_bytes(), 1'000'000 * sizeof(Array));
  EXPECT_LT(file->memory_bytes(), 1'000'000 * sizeof(Array) + 4096);
}

}  // namespace
}  // namespace gb10tune::gguf
