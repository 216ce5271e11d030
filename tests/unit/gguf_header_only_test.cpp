// Header-only copies of a GGUF file: read for planning (Completeness::header_only), refused as
// truncated where a server would load the file (the default).
#include <gtest/gtest.h>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "support/gguf_writer.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::gguf {
namespace {

// The report model whole (sparse) and as a header-only copy cut `extra` bytes past its header.
struct HeaderOnlyPair {
  std::filesystem::path whole;
  std::filesystem::path header;
};

HeaderOnlyPair write_header_only_pair(const testing::TempDir& dir, std::uint64_t extra) {
  const testing::GgufWriter w = testing::large_report_model();
  HeaderOnlyPair pair{dir.path() / "whole.gguf", dir.path() / "head.gguf"};
  w.write(pair.whole);
  w.write(pair.header);
  std::filesystem::resize_file(pair.header, w.layout().data_offset + extra);
  return pair;
}

TEST(GgufHeaderOnly, AHeaderOnlyCopyReadsAsTheWholeFile) {
  testing::TempDir dir;
  const auto pair = write_header_only_pair(dir, 0);
  const auto whole = read_gguf(pair.whole);
  ASSERT_TRUE(whole) << whole.error().message;
  const auto header = read_gguf(pair.header, Completeness::header_only);
  ASSERT_TRUE(header) << header.error().message;
  EXPECT_TRUE(header->header_only());
  EXPECT_FALSE(whole->header_only());
  EXPECT_EQ(header->file_size(), whole->file_size());
  EXPECT_EQ(header->data_offset(), whole->data_offset());
  EXPECT_EQ(header->data_size(), whole->data_size());
  EXPECT_EQ(header->tensors().size(), whole->tensors().size());
  // A whole file read header_only is still whole.
  const auto whole_again = read_gguf(pair.whole, Completeness::header_only);
  ASSERT_TRUE(whole_again);
  EXPECT_FALSE(whole_again->header_only());
}

TEST(GgufHeaderOnly, TheModelFactsOfACopyEqualTheWholeFiles) {
  testing::TempDir dir;
  const auto pair = write_header_only_pair(dir, 4096);  // some data, not all of it
  const auto whole = model::read_model(pair.whole);
  const auto header = model::read_model(pair.header, Completeness::header_only);
  ASSERT_TRUE(whole) << whole.error().message;
  ASSERT_TRUE(header) << header.error().message;
  EXPECT_EQ(header->weight_bytes, whole->weight_bytes);
  EXPECT_EQ(header->bytes_read_per_token, whole->bytes_read_per_token);
  EXPECT_EQ(header->mtp_layer_count, whole->mtp_layer_count);
}

TEST(GgufHeaderOnly, AWholeFileReadStillRefusesACopy) {
  testing::TempDir dir;
  const auto pair = write_header_only_pair(dir, 0);
  const auto refused = read_gguf(pair.header);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(testing::contains(refused.error().message, "the file is truncated"))
      << refused.error().message;
  EXPECT_FALSE(model::read_model(pair.header));
}

TEST(GgufHeaderOnly, AFileCutInsideItsHeaderIsStillAnError) {
  testing::TempDir dir;
  const auto pair = write_header_only_pair(dir, 0);
  std::filesystem::resize_file(pair.header, std::filesystem::file_size(pair.header) / 2);
  const auto cut = read_gguf(pair.header, Completeness::header_only);
  ASSERT_FALSE(cut);
  EXPECT_TRUE(testing::contains(cut.error().message, "truncated or corrupt"))
      << cut.error().message;
}

}  // namespace
}  // namespace gb10tune::gguf
