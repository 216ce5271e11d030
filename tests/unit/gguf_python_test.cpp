// Reads a file written by llama.cpp's own Python `gguf` package, when it is installed
// (`pip install gguf`); skips with the reason otherwise. The interpreter is
// $GB10TUNE_GGUF_PYTHON (scripts/install_python_gguf.sh makes one with the package), else
// python3; with GB10TUNE_REQUIRE_GGUF=1 (CI) a missing package fails the tests instead.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/platform/process.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::gguf {
namespace {

// The Python that has the gguf package: $GB10TUNE_GGUF_PYTHON, else python3 from PATH.
std::string gguf_python() {
  const char* python = std::getenv("GB10TUNE_GGUF_PYTHON");
  return python != nullptr && *python != '\0' ? python : "python3";
}

// Empty when `import gguf, numpy` works in gguf_python(); why not otherwise.
std::string gguf_missing() {
  const auto probe =
      platform::run_capture({gguf_python(), "-c", "import gguf, numpy"}, std::chrono::seconds(60));
  if (probe && probe->exit_status == 0) {
    return "";
  }
  return gguf_python() + " with the gguf package is not available (" +
         (probe ? probe->output : probe.error().message) +
         "); scripts/install_python_gguf.sh or `pip install gguf` enables this test";
}

bool gguf_required() {
  const char* value = std::getenv("GB10TUNE_REQUIRE_GGUF");
  return value != nullptr && std::string_view(value) == "1";
}

TEST(GgufPython, ReadsWhatTheOfficialWriterWrote) {
  if (const std::string missing = gguf_missing(); !missing.empty()) {
    ASSERT_FALSE(gguf_required()) << "GB10TUNE_REQUIRE_GGUF=1: " << missing;
    GTEST_SKIP() << missing;
  }
  testing::TempDir dir;
  const auto path = dir.path() / "python.gguf";
  const auto wrote = platform::run_capture(
      {gguf_python(), testing::fixture("gguf/write_with_python.py").string(), path.string()},
      std::chrono::seconds(60));
  ASSERT_TRUE(wrote) << wrote.error().message;
  ASSERT_EQ(wrote->exit_status, 0) << wrote->output;

  const auto file = read_gguf(path);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->get_string("general.architecture").value_or(""), "qwen35");
  EXPECT_EQ(file->get_string("general.name").value_or(""), "python-written");
  EXPECT_EQ(file->get_uint("test.u8").value_or(0), 200u);
  EXPECT_EQ(file->get_int("test.i8").value_or(0), -100);
  EXPECT_EQ(file->get_uint("test.u16").value_or(0), 60000u);
  EXPECT_EQ(file->get_int("test.i16").value_or(0), -30000);
  EXPECT_EQ(file->get_uint("test.u32").value_or(0), 4000000000u);
  EXPECT_EQ(file->get_int("test.i32").value_or(0), -2000000000);
  EXPECT_EQ(file->get_uint("test.u64").value_or(0), 18000000000000000000ull);
  EXPECT_EQ(file->get_int("test.i64").value_or(0), -9000000000000000000ll);
  EXPECT_EQ(file->get_float("test.f32").value_or(0), 1.5);
  EXPECT_EQ(file->get_float("test.f64").value_or(0), -2.25);
  EXPECT_TRUE(file->get_bool("test.bool").value_or(false));
  EXPECT_EQ(file->get_string("test.string").value_or(""), "qwen35 ☃");
  const Array* strings = file->get_array("test.strings").value_or(nullptr);
  ASSERT_NE(strings, nullptr);
  EXPECT_EQ(*strings->string_at(1), "bc");
  const Array* nested = file->get_array("test.nested").value_or(nullptr);
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->size(), 2u);
  EXPECT_EQ(nested->array_at(0)->uint_at(1), 2u);
  EXPECT_EQ(nested->array_at(1)->uint_at(0), 3u);
  EXPECT_EQ(file->get_uint_per_layer("qwen35.attention.head_count_kv", 5).value_or({}),
            (std::vector<std::uint64_t>{1, 1, 1, 2, 1}));

  ASSERT_EQ(file->tensors().size(), 4u);
  const TensorInfo* embd = file->find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->shape[0], 256u);  // numpy (10, 256) is ggml [256, 10]
  EXPECT_EQ(embd->shape[1], 10u);
  EXPECT_EQ(embd->bytes, 10240u);
  const TensorInfo* q8 = file->find_tensor("blk.0.ssm_out.weight");
  ASSERT_NE(q8, nullptr);
  EXPECT_EQ(q8->type, GgmlType::q8_0);
  EXPECT_EQ(q8->shape[0], 256u);
  EXPECT_EQ(q8->bytes, 2u * 8 * 34);
  const TensorInfo* q4k = file->find_tensor("blk.4.nextn.eh_proj.weight");
  ASSERT_NE(q4k, nullptr);
  EXPECT_EQ(q4k->type, GgmlType::q4_k);
  EXPECT_EQ(q4k->bytes, 144u);
  EXPECT_EQ(file->data_offset() + file->data_size(), file->file_size());

  const auto facts = model::describe_model(*file);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_TRUE(facts->supported);
  EXPECT_EQ(facts->main_layer_count, 4u);
  // Interval 2: layers 1 and 3 keep KV (1 and 2 heads of 64 dims).
  EXPECT_EQ(facts->kv_layer_count(model::KvScope::full_attention), 2u);
  EXPECT_EQ(facts->kv_bytes_per_cell(model::KvScope::full_attention, GgmlType::f16, GgmlType::f16)
                .value_or(0),
            (64u + 128u) * 2 * 2);
  EXPECT_EQ(facts->mtp_weight_bytes, 144u);
}

// The tiny-qwen35 model behind the captured llama-server answers: what the gguf package
// writes (write_tiny_qwen35.py) has the header and tensors of tiny_qwen35_model().
TEST(GgufPython, TinyQwen35MatchesTheTestsWriter) {
  if (const std::string missing = gguf_missing(); !missing.empty()) {
    ASSERT_FALSE(gguf_required()) << "GB10TUNE_REQUIRE_GGUF=1: " << missing;
    GTEST_SKIP() << missing;
  }
  testing::TempDir dir;
  for (const bool mtp : {true, false}) {
    const auto python = dir.path() / (mtp ? "python-mtp.gguf" : "python.gguf");
    std::vector<std::string> argv = {
        gguf_python(), testing::fixture("gguf/write_tiny_qwen35.py").string(), python.string()};
    if (!mtp) {
      argv.emplace_back("--no-mtp");
    }
    const auto wrote = platform::run_capture(argv, std::chrono::seconds(60));
    ASSERT_TRUE(wrote) << wrote.error().message;
    ASSERT_EQ(wrote->exit_status, 0) << wrote->output;
    const auto ours = dir.path() / (mtp ? "ours-mtp.gguf" : "ours.gguf");
    testing::tiny_qwen35_model(mtp).write(ours);

    const auto a = read_gguf(python);
    const auto b = read_gguf(ours);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->tensors().size(), b->tensors().size()) << mtp;
    for (const TensorInfo& tensor : a->tensors()) {
      const TensorInfo* other = b->find_tensor(tensor.name);
      ASSERT_NE(other, nullptr) << tensor.name;
      EXPECT_EQ(tensor.shape, other->shape) << tensor.name;
      EXPECT_EQ(tensor.type, other->type) << tensor.name;
    }
    const auto fa = model::describe_model(*a);
    const auto fb = model::describe_model(*b);
    ASSERT_TRUE(fa && fb);
    EXPECT_EQ(fa->has_mtp(), mtp);
    EXPECT_EQ(fa->main_layer_count, fb->main_layer_count);
    EXPECT_EQ(fa->context_length, fb->context_length);
    EXPECT_EQ(fa->weight_bytes, fb->weight_bytes);
    EXPECT_EQ(fa->mtp_weight_bytes, fb->mtp_weight_bytes);
    EXPECT_EQ(fa->recurrent_bytes_per_sequence, fb->recurrent_bytes_per_sequence);
    EXPECT_EQ(a->get_array("tokenizer.ggml.tokens").value_or(nullptr)->size(),
              b->get_array("tokenizer.ggml.tokens").value_or(nullptr)->size());
  }
}

}  // namespace
}  // namespace gb10tune::gguf
