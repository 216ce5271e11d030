// classify_failure on log tails as llama-server (llama.cpp 3f545be) prints them.
#include "gb10tune/launch/start_failure.hpp"

#include <gtest/gtest.h>

#include "gb10tune/sys/process_owner.hpp"

namespace gb10tune::launch {
namespace {

constexpr std::string_view kStartOfLog =
    "0.00.000.512 I cmn  common_params_print_info: build 8123 (3f545be) with GNU 13.3.0 for Linux "
    "aarch64\n"
    "0.00.000.530 I cmn  common_params_print_info: system_info: n_threads = 20 | CUDA : ARCHS = "
    "1210 | CPU : NEON = 1 | DOTPROD = 1 | SVE = 1 |\n"
    "0.00.002.114 I srv    load_model: loading model '/models/qwen.gguf'\n";

std::string with_start(std::string_view tail) {
  return std::string(kStartOfLog) + std::string(tail);
}

TEST(StartFailure, CudaOutOfMemoryWhileAllocatingTheKvCache) {
  const std::string log = with_start(
      "llama_model_loader: loaded meta data with 46 key-value pairs and 851 tensors\n"
      "................................................\n"
      "0.00.512.001 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 36864.00 MiB on "
      "device 0: cudaMalloc failed: out of memory\n"
      "0.00.512.010 E alloc_tensor_range: failed to allocate CUDA0 buffer of size 38654705664\n"
      "0.00.512.020 E llama_init_from_model: failed to initialize the context: failed to "
      "allocate buffer for kv cache\n"
      "0.00.512.030 E srv    load_model: failed to create_context with model "
      "'/models/qwen.gguf'\n"
      "0.00.512.100 E srv          main: exiting due to model loading error\n");
  EXPECT_EQ(classify_failure(log, false), StartFailure::out_of_memory);
  EXPECT_NE(failure_evidence(log, StartFailure::out_of_memory).find("cudaMalloc failed"),
            std::string::npos);
}

TEST(StartFailure, WeightsThatDoNotFitAreMemoryNotABadModel) {
  // "error loading model" is a bad-model message, but the cause named in it is memory.
  const std::string log = with_start(
      "0.00.300.000 E llama_model_load: error loading model: unable to allocate CUDA0 buffer\n"
      "0.00.300.010 E llama_model_load_from_file_impl: failed to load model\n");
  EXPECT_EQ(classify_failure(log, false), StartFailure::out_of_memory);
}

TEST(StartFailure, HostAllocationFailure) {
  EXPECT_EQ(classify_failure(with_start("terminate called after throwing an instance of "
                                        "'std::bad_alloc'\n  what():  std::bad_alloc\n"),
                             false),
            StartFailure::out_of_memory);
}

TEST(StartFailure, UnknownOption) {
  const std::string log = "error: invalid argument: --no-such-flag\n";
  EXPECT_EQ(classify_failure(log, false), StartFailure::unknown_flag);
  EXPECT_EQ(failure_evidence(log, StartFailure::unknown_flag),
            "error: invalid argument: --no-such-flag");
}

TEST(StartFailure, RemovedOption) {
  // common/arg.cpp's arg_removed(), as printed for --draft-max (K15).
  const std::string log =
      "error while handling argument \"--draft-max\": the argument has been removed. use "
      "--spec-draft-n-max or --spec-ngram-mod-n-max\n\nusage:\n--draft, --draft-n, --draft-max "
      "N\n\nto show complete usage, run with -h\n";
  EXPECT_EQ(classify_failure(log, false), StartFailure::unknown_flag);
}

TEST(StartFailure, BadValueOfAnEnvironmentVariable) {
  EXPECT_EQ(classify_failure("error while handling environment variable \"LLAMA_ARG_N_PARALLEL\": "
                             "stoi\n\n",
                             false),
            StartFailure::unknown_flag);
}

TEST(StartFailure, PortInUse) {
  const std::string log = with_start(
      "0.00.001.000 E srv         start: couldn't bind HTTP server socket, hostname: 127.0.0.1, "
      "port: 8080\n"
      "0.00.001.010 I srv    operator(): operator(): cleaning up before exit...\n"
      "0.00.001.020 E srv          main: exiting due to HTTP server error\n");
  EXPECT_EQ(classify_failure(log, false), StartFailure::port_in_use);
  EXPECT_NE(failure_evidence(log, StartFailure::port_in_use).find("port: 8080"), std::string::npos);
}

TEST(StartFailure, NotAGgufFile) {
  const std::string log = with_start(
      "0.00.002.200 E gguf_init_from_file_impl: invalid magic characters: 'ggjt', expected "
      "'GGUF'\n"
      "0.00.002.210 E llama_model_load: error loading model: llama_model_loader: failed to load "
      "model from /models/qwen.gguf\n"
      "0.00.002.300 E srv          main: exiting due to model loading error\n");
  EXPECT_EQ(classify_failure(log, false), StartFailure::bad_model);
}

TEST(StartFailure, MissingModelFile) {
  EXPECT_EQ(classify_failure(with_start("0.00.002.200 E gguf_init_from_file: failed to open GGUF "
                                        "file '/models/x.gguf' (No such file or directory)\n"),
                             false),
            StartFailure::bad_model);
}

TEST(StartFailure, TimeoutWinsOverText) {
  EXPECT_EQ(classify_failure(with_start("....\n"), true), StartFailure::timed_out);
  EXPECT_EQ(classify_failure("error: invalid argument: --x\n", true), StartFailure::timed_out);
}

TEST(StartFailure, UnknownTextIsACrash) {
  EXPECT_EQ(classify_failure(with_start("......\nAborted (core dumped)\n"), false),
            StartFailure::crashed);
  EXPECT_EQ(classify_failure("", false), StartFailure::crashed);
  EXPECT_EQ(failure_evidence("", StartFailure::crashed), "");
}

TEST(StartFailure, NamesAndAdviceExistForEveryCause) {
  for (StartFailure failure :
       {StartFailure::out_of_memory, StartFailure::unknown_flag, StartFailure::bad_model,
        StartFailure::port_in_use, StartFailure::crashed, StartFailure::timed_out,
        StartFailure::interrupted, StartFailure::spawn_failed}) {
    EXPECT_FALSE(failure_name(failure).empty());
    EXPECT_FALSE(failure_advice(failure).empty());
  }
  EXPECT_EQ(failure_name(StartFailure::out_of_memory), "out of memory");
  EXPECT_NE(failure_advice(StartFailure::port_in_use).find("--port"), std::string::npos);
}

TEST(StartFailure, LastLines) {
  EXPECT_EQ(last_lines("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(last_lines("a\nb\nc", 2), "b\nc");
  EXPECT_EQ(last_lines("a\nb\nc\n", 10), "a\nb\nc");
  EXPECT_EQ(last_lines("a\nb\nc\n", 1), "c");
  EXPECT_EQ(last_lines("", 3), "");
  EXPECT_EQ(last_lines("abc", 0), "");
}

TEST(ProcessOwner, ParsesTheRealUid) {
  EXPECT_EQ(sys::parse_status_uid("Name:\tllama-server\nUid:\t1000\t1000\t1000\t1000\n"), 1000u);
  EXPECT_EQ(sys::parse_status_uid("Uid:\t0\t0\t0\t0\n"), 0u);
  EXPECT_EQ(sys::parse_status_uid("Name:\tx\n"), std::nullopt);
  EXPECT_EQ(sys::parse_status_uid("Uid:\tabc\n"), std::nullopt);
}

}  // namespace
}  // namespace gb10tune::launch
