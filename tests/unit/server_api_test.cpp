#include "gb10tune/http/server_api.hpp"

#include <gtest/gtest.h>

namespace gb10tune::http {
namespace {

using http::HttpResponse;

// A /props answer shaped like llama-server 3f545be's (trimmed of the chat template). That
// build shows the per-request default "none" in speculative.types even while the server runs
// draft-mtp (see the captured answers in fixtures/llama-server/captured/).
constexpr const char* kProps = R"({
  "default_generation_settings": {
    "params": {"seed": 4294967295, "temperature": 0.8, "n_predict": -1,
               "speculative.types": "none", "timings_per_token": false},
    "n_ctx": 196608
  },
  "total_slots": 3,
  "model_alias": "Qwen3.8-27B-Q4_K_M.gguf",
  "model_ftype": "Q4_K - Medium",
  "model_path": "/models/Qwen3.8-27B-Q4_K_M.gguf",
  "modalities": {"vision": false, "video": false, "audio": false},
  "endpoint_slots": true, "endpoint_props": false, "endpoint_metrics": false,
  "build_info": "b8123-3f545be",
  "is_sleeping": false
})";

TEST(ServerApiHealth, ClassifiesReadyLoadingAndErrors) {
  EXPECT_EQ(classify_health({200, R"({"status":"ok"})", "application/json"}), HealthState::ready);
  EXPECT_EQ(classify_health({503,
                             R"({"error":{"code":503,"message":"Loading model",)"
                             R"("type":"unavailable_error"}})",
                             "application/json"}),
            HealthState::loading);
  // A 503 from something else (a proxy page) is not "loading".
  EXPECT_EQ(classify_health({503, "<html>Service Unavailable</html>", "text/html"}),
            HealthState::error);
  EXPECT_EQ(classify_health({500, R"({"error":{"code":500,"message":"boom"}})", ""}),
            HealthState::error);
  EXPECT_EQ(classify_health({404, "", ""}), HealthState::error);
}

TEST(ServerApiProps, ParsesTheCurrentShape) {
  const auto props = parse_props(kProps);
  ASSERT_TRUE(props) << props.error().message;
  EXPECT_EQ(props->n_ctx_per_slot, 196608u);
  EXPECT_EQ(props->total_slots, 3u);
  EXPECT_EQ(props->model_path, "/models/Qwen3.8-27B-Q4_K_M.gguf");
  EXPECT_EQ(props->build_info, "b8123-3f545be");
  EXPECT_EQ(props->model_alias, "Qwen3.8-27B-Q4_K_M.gguf");
  EXPECT_EQ(props->speculative_types, "none");
  EXPECT_EQ(props->is_sleeping, false);
  EXPECT_EQ(props->endpoint_metrics, false);
  EXPECT_FALSE(props->speculative_n_max.has_value());
}

TEST(ServerApiProps, OlderBuildsLeaveOptionalFieldsUnset) {
  // c392e50-era shape: no build_info, no is_sleeping, speculative.n_max instead of types.
  const auto props = parse_props(R"({
    "default_generation_settings": {"n_ctx": 8192, "params": {"speculative.n_max": 16}},
    "total_slots": 1, "model_path": "m.gguf", "chat_template": ""})");
  ASSERT_TRUE(props) << props.error().message;
  EXPECT_EQ(props->n_ctx_per_slot, 8192u);
  EXPECT_EQ(props->build_info, "");
  EXPECT_FALSE(props->is_sleeping.has_value());
  EXPECT_FALSE(props->speculative_types.has_value());
  EXPECT_EQ(props->speculative_n_max, 16);
}

TEST(ServerApiProps, MissingRequiredFieldsAreNamed) {
  const auto no_slots =
      parse_props(R"({"default_generation_settings":{"n_ctx":1},"model_path":"m"})");
  ASSERT_FALSE(no_slots);
  EXPECT_NE(no_slots.error().message.find("total_slots"), std::string::npos);
  const auto no_ctx = parse_props(R"({"default_generation_settings":{},"total_slots":1,)"
                                  R"("model_path":"m"})");
  ASSERT_FALSE(no_ctx);
  EXPECT_NE(no_ctx.error().message.find("n_ctx"), std::string::npos);
  const auto negative = parse_props(R"({"default_generation_settings":{"n_ctx":-5},)"
                                    R"("total_slots":1,"model_path":"m"})");
  EXPECT_FALSE(negative);
}

TEST(ServerApiProps, GarbageIsAnError) {
  for (const char* text : {"", "not json", "[1,2]", "{\"total_slots\":", "null"}) {
    const auto props = parse_props(text);
    ASSERT_FALSE(props) << text;
    EXPECT_EQ(props.error().code, ExitCode::failed);
    EXPECT_NE(props.error().message.find("/props"), std::string::npos);
  }
}

TEST(ServerApiSlots, ParsesEverySlot) {
  const auto slots = parse_slots(R"([
    {"id":0,"n_ctx":196608,"speculative":true,"is_processing":true,"id_task":12},
    {"id":1,"n_ctx":196608,"speculative":true,"is_processing":false},
    {"id":2,"n_ctx":196608,"is_processing":false}])");
  ASSERT_TRUE(slots) << slots.error().message;
  ASSERT_EQ(slots->size(), 3u);
  EXPECT_EQ((*slots)[0].id, 0);
  EXPECT_TRUE((*slots)[0].is_processing);
  EXPECT_EQ((*slots)[1].speculative, true);
  EXPECT_FALSE((*slots)[1].is_processing);
  EXPECT_EQ((*slots)[2].id, 2);
  EXPECT_EQ((*slots)[2].n_ctx, 196608u);
  EXPECT_FALSE((*slots)[2].speculative.has_value());
}

TEST(ServerApiSlots, DisabledEndpointAndGarbage) {
  const auto disabled = parse_slots(
      R"({"error":{"code":501,"message":"This server does not support slots endpoint.",)"
      R"("type":"not_supported_error"}})");
  ASSERT_FALSE(disabled);
  EXPECT_NE(disabled.error().message.find("--no-slots"), std::string::npos);
  EXPECT_FALSE(parse_slots("garbage"));
  EXPECT_FALSE(parse_slots(R"([{"id":0}])"));
  EXPECT_FALSE(parse_slots(R"([1])"));
  const auto empty = parse_slots("[]");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(ServerApiTimings, ParsesChatCompletionWithDraftFields) {
  const auto timings = parse_completion_timings(R"({
    "choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"hi"}}],
    "usage":{"completion_tokens":128,"prompt_tokens":612,"total_tokens":740},
    "timings":{"cache_n":100,"prompt_n":512,"prompt_ms":1656.31,"prompt_per_token_ms":3.235,
               "prompt_per_second":309.12,"predicted_n":128,"predicted_ms":5400.42,
               "predicted_per_token_ms":42.19,"predicted_per_second":23.7,
               "draft_n":132,"draft_n_accepted":89}})");
  ASSERT_TRUE(timings) << timings.error().message;
  EXPECT_DOUBLE_EQ(timings->prompt_n, 512);
  EXPECT_DOUBLE_EQ(timings->prompt_ms, 1656.31);
  EXPECT_DOUBLE_EQ(timings->prompt_per_second, 309.12);
  EXPECT_DOUBLE_EQ(timings->predicted_n, 128);
  EXPECT_DOUBLE_EQ(timings->predicted_ms, 5400.42);
  EXPECT_DOUBLE_EQ(timings->predicted_per_second, 23.7);
  EXPECT_EQ(timings->cache_n, 100);
  EXPECT_EQ(timings->draft_n, 132);
  EXPECT_EQ(timings->draft_n_accepted, 89);
}

TEST(ServerApiTimings, NoDraftingMeansNoDraftFields) {
  const auto timings = parse_completion_timings(
      R"({"content":"x","timings":{"prompt_n":1,"prompt_ms":2,"prompt_per_second":500,)"
      R"("predicted_n":3,"predicted_ms":4,"predicted_per_second":750}})");
  ASSERT_TRUE(timings) << timings.error().message;
  EXPECT_FALSE(timings->cache_n.has_value());
  EXPECT_FALSE(timings->draft_n.has_value());
  EXPECT_FALSE(timings->draft_n_accepted.has_value());
}

TEST(ServerApiTimings, MissingTimingsAsksWhetherThisIsLlamaServer) {
  const auto openai = parse_completion_timings(
      R"({"choices":[{"message":{"content":"hi"}}],"usage":{"total_tokens":3}})");
  ASSERT_FALSE(openai);
  EXPECT_EQ(openai.error().message,
            "the server's answer has no `timings` object; is this llama-server?");
  const auto error = parse_completion_timings(
      R"({"error":{"code":400,"message":"'messages' is required","type":"invalid_request_error"}})");
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().message.find("'messages' is required"), std::string::npos);
}

TEST(ServerApiTimings, IncompleteOrMistypedTimingsAreErrors) {
  const auto missing = parse_completion_timings(
      R"({"timings":{"prompt_n":1,"prompt_ms":2,"prompt_per_second":3,"predicted_n":4,)"
      R"("predicted_ms":5}})");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("predicted_per_second"), std::string::npos);
  EXPECT_FALSE(parse_completion_timings(R"({"timings":"fast"})"));
  EXPECT_FALSE(parse_completion_timings(R"({"timings":{"prompt_n":"1"}})"));
  EXPECT_FALSE(parse_completion_timings("<html>"));
}

}  // namespace
}  // namespace gb10tune::http
