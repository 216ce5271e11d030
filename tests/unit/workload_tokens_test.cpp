// The workload sized by the server's own token counts (bench/workload: count_workload_tokens,
// fit_workload_to_server) and deepened for tune --depth (bench/workload_depth), with a fake
// tokenizer; and the parsers of /apply-template and /tokenize against what a real llama-server
// (3f545be) answered.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>

#include "gb10tune/bench/workload.hpp"
#include "gb10tune/bench/workload_depth.hpp"
#include "gb10tune/http/server_api.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::bench {
namespace {

using nlohmann::json;

// A byte-level vocabulary: ChatML around each message, one token per `bytes` bytes of the
// templated prompt, plus BOS. Counts its calls.
struct ByteTokenizer {
  int bytes = 3;
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);

  PromptTokenCounter counter() const {
    return [bytes = bytes, calls = calls](const json& body) -> Expected<std::uint64_t> {
      ++*calls;
      std::string prompt;
      for (const auto& message : body["messages"]) {
        prompt += "<|im_start|>" + message["role"].get<std::string>() + "\n" +
                  message["content"].get<std::string>() + "<|im_end|>\n";
      }
      prompt += "<|im_start|>assistant\n";
      return 1 + (prompt.size() + bytes - 1) / bytes;
    };
  }
};

// One conversation of four turns of `chars` characters each, answers `max_tokens` long.
Workload conversation(std::size_t chars, int max_tokens = 100) {
  json turns = json::array();
  for (int turn = 0; turn < 4; ++turn) {
    turns.push_back({{"user", std::string(chars, 'u')}, {"assistant", std::string(chars, 'a')}});
  }
  const json line = {{"conversation", "grow"},
                     {"system", "be brief"},
                     {"max_tokens", max_tokens},
                     {"turns", turns}};
  auto workload = parse_workload(line.dump() + "\n", "grow.jsonl");
  EXPECT_TRUE(workload) << workload.error().message;
  return *workload;
}

TEST(WorkloadTokens, CountsEveryRequestWithTheServersTokenizer) {
  Workload workload = conversation(900);
  const ByteTokenizer tokenizer;
  EXPECT_EQ(count_workload_tokens(workload, tokenizer.counter()), "");
  EXPECT_TRUE(workload.counted);
  // Turn 1: the system and user messages in ChatML, 3 bytes a token, and BOS.
  const std::uint64_t first = 1 + (std::string("<|im_start|>system\nbe brief<|im_end|>\n").size() +
                                   std::string("<|im_start|>user\n").size() + 900 +
                                   std::string("<|im_end|>\n<|im_start|>assistant\n").size() + 2) /
                                      3;
  EXPECT_EQ(workload.requests[0].prompt_tokens, first);
  EXPECT_EQ(slot_tokens(workload.requests[0]), first + 100);
  // Byte-level counts are far above the 4-characters-per-token estimate.
  EXPECT_GT(slot_tokens(workload.requests[3]), estimated_slot_tokens(workload.requests[3]));
}

TEST(WorkloadTokens, RequestsLongerThanTheSlotAreLeftOutWithOneLine) {
  Workload workload = conversation(900);
  const ByteTokenizer tokenizer;
  // Turn 3 (five messages of 900 characters) needs 1671 tokens counted, 1275 estimated: at a
  // slot of 1400 the estimate keeps it, and the server would refuse it with HTTP 400.
  Workload estimated = workload;
  const auto by_estimate = fit_workload(estimated, 0, 1400);
  ASSERT_TRUE(by_estimate);
  EXPECT_EQ(estimated.requests.size(), 3u);
  const auto fitted = fit_workload_to_server(workload, 0, 1400, tokenizer.counter());
  ASSERT_TRUE(fitted) << fitted.error().message;
  ASSERT_EQ(fitted->size(), 1u);
  EXPECT_EQ(fitted->front(),
            "2 of 4 requests left out: longer than the server's slot of 1400 tokens (their "
            "prompt, counted by the server's tokenizer, and max_tokens; they would fail with HTTP "
            "400); give each slot more context to keep them");
  ASSERT_EQ(workload.requests.size(), 2u);
  EXPECT_EQ(workload.requests[1].name, "grow/2");
  EXPECT_EQ(workload.source, "grow.jsonl (slot 1400)");
  for (const WorkloadRequest& request : workload.requests) {
    EXPECT_LE(slot_tokens(request), 1400u) << request.name;
  }
}

TEST(WorkloadTokens, NothingThatFitsIsAnErrorNamingTheSlotAndTheFix) {
  Workload workload = conversation(3000);
  const auto fitted = fit_workload_to_server(workload, 0, 512, ByteTokenizer{}.counter());
  ASSERT_FALSE(fitted);
  EXPECT_EQ(fitted.error().code, ExitCode::failed);
  const std::string& message = fitted.error().message;
  EXPECT_NE(message.find("no request of grow.jsonl fits the server's slot of 512 tokens"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("a larger -c, or fewer slots with -np"), std::string::npos) << message;
}

TEST(WorkloadTokens, WithoutTheServersCountTheEstimateIsUsedAndSaidSo) {
  Workload workload = conversation(900);
  const PromptTokenCounter old_build = [](const json&) -> Expected<std::uint64_t> {
    return Error{"http://127.0.0.1:8080/apply-template answered HTTP 404: File Not Found"};
  };
  const auto fitted = fit_workload_to_server(workload, 0, 3000, old_build);
  ASSERT_TRUE(fitted) << fitted.error().message;
  ASSERT_EQ(fitted->size(), 1u);
  EXPECT_NE(fitted->front().find("the server did not count the prompt tokens of request grow/1 "
                                 "(http://127.0.0.1:8080/apply-template answered HTTP 404"),
            std::string::npos)
      << fitted->front();
  EXPECT_NE(fitted->front().find("estimated at 4 characters per token"), std::string::npos);
  EXPECT_FALSE(workload.counted);
  for (const WorkloadRequest& request : workload.requests) {
    EXPECT_EQ(request.prompt_tokens, 0u);
    EXPECT_EQ(slot_tokens(request), estimated_slot_tokens(request));
  }
  // No counter at all (an endpoint that cannot count): the same fallback.
  Workload again = conversation(900);
  const auto without = fit_workload_to_server(again, 0, 3000, PromptTokenCounter());
  ASSERT_TRUE(without);
  ASSERT_EQ(without->size(), 1u);
  EXPECT_NE(without->front().find("estimated"), std::string::npos);
}

TEST(WorkloadTokens, RememberedCountsAskTheServerOncePerPrompt) {
  const ByteTokenizer tokenizer;
  const PromptTokenCounter remembered = remember_counts(tokenizer.counter());
  Workload workload = conversation(100);
  ASSERT_EQ(count_workload_tokens(workload, remembered), "");
  ASSERT_EQ(count_workload_tokens(workload, remembered), "");
  EXPECT_EQ(tokenizer.calls->load(), 4);
}

TEST(WorkloadDepth, EveryShallowerRequestIsBroughtToTheDepth) {
  const ByteTokenizer tokenizer;
  Workload workload = conversation(300);
  ASSERT_EQ(count_workload_tokens(workload, tokenizer.counter()), "");
  const std::uint64_t deepest = workload.requests.back().prompt_tokens;
  EXPECT_EQ(default_depth(workload, 0), deepest);
  ASSERT_TRUE(deepen_workload(workload, 4000, tokenizer.counter()));
  const std::string filler = depth_filler(200);
  for (const WorkloadRequest& request : workload.requests) {
    // Within 1% (at least 8 tokens) below the depth, never above: the slot was checked for it.
    EXPECT_LE(request.prompt_tokens, 4000u) << request.name;
    EXPECT_GE(request.prompt_tokens, 4000u - 40u) << request.name;
    const auto counted = tokenizer.counter()(request.body);
    ASSERT_TRUE(counted);
    EXPECT_EQ(*counted, request.prompt_tokens) << request.name;
    // The filler comes first (a prefix the server's prompt cache shares), the request after it.
    const std::string first = request.body["messages"][0]["content"].get<std::string>();
    EXPECT_EQ(first.substr(0, filler.size()), filler) << request.name;
    EXPECT_EQ(first.substr(first.size() - std::string("be brief").size()), "be brief");
    EXPECT_NE(first.find("\n\nbe brief"), std::string::npos);
  }
  // Deterministic: the same prompts again (the pairs of two candidates compare like with like).
  Workload again = conversation(300);
  ASSERT_EQ(count_workload_tokens(again, tokenizer.counter()), "");
  ASSERT_TRUE(deepen_workload(again, 4000, tokenizer.counter()));
  for (std::size_t i = 0; i < again.requests.size(); ++i) {
    EXPECT_EQ(again.requests[i].body, workload.requests[i].body);
  }
}

TEST(WorkloadDepth, ARequestAlreadyDeepStaysAsWritten) {
  const ByteTokenizer tokenizer;
  Workload workload = conversation(300);
  ASSERT_EQ(count_workload_tokens(workload, tokenizer.counter()), "");
  const Workload before = workload;
  const std::uint64_t depth = workload.requests[2].prompt_tokens;
  ASSERT_TRUE(deepen_workload(workload, depth, tokenizer.counter()));
  EXPECT_NE(workload.requests[0].body, before.requests[0].body);
  EXPECT_EQ(workload.requests[2].body, before.requests[2].body);
  EXPECT_EQ(workload.requests[3].body, before.requests[3].body);
  EXPECT_EQ(workload.requests[3].prompt_tokens, before.requests[3].prompt_tokens);
}

TEST(WorkloadDepth, TheDefaultIsTheDeepestPromptCappedToWhatTheSlotLeaves) {
  const ByteTokenizer tokenizer;
  Workload workload = conversation(300, 200);
  ASSERT_EQ(count_workload_tokens(workload, tokenizer.counter()), "");
  const std::uint64_t deepest = workload.requests.back().prompt_tokens;
  EXPECT_EQ(default_depth(workload, deepest + 200), deepest);
  EXPECT_EQ(deepest_fitting(workload, deepest + 100), deepest - 100);
  EXPECT_EQ(default_depth(workload, deepest + 100), deepest - 100);
  EXPECT_EQ(deepest_fitting(workload, 150), 0u);
  // Not counted: no default depth (the prompts as written).
  Workload estimated = conversation(300);
  EXPECT_EQ(default_depth(estimated, 100000), 0u);
  EXPECT_FALSE(deepen_workload(estimated, 1000, tokenizer.counter()));
}

TEST(WorkloadDepth, AFailingCountChangesNothing) {
  const ByteTokenizer tokenizer;
  Workload workload = conversation(300);
  ASSERT_EQ(count_workload_tokens(workload, tokenizer.counter()), "");
  const Workload before = workload;
  const PromptTokenCounter failing = [](const json&) -> Expected<std::uint64_t> {
    return Error{"connection refused"};
  };
  const Status deepened = deepen_workload(workload, 3000, failing);
  ASSERT_FALSE(deepened);
  EXPECT_EQ(deepened.error().message, "connection refused");
  for (std::size_t i = 0; i < workload.requests.size(); ++i) {
    EXPECT_EQ(workload.requests[i].body, before.requests[i].body);
  }
}

// What llama-server 3f545be answered for the shipped workload's first request
// (fixtures/llama-server/tokenize-3f545be/, its README says how it was taken): /apply-template's
// prompt, /tokenize's tokens for it with add_special, and the completion of the same request,
// whose prompt_n (cache_prompt false) is the count a slot must hold.
TEST(WorkloadTokens, TheRealServersAnswersGiveTheCountItsCompletionUsed) {
  const std::string dir = std::string(GB10TUNE_FIXTURES_DIR) + "/llama-server/tokenize-3f545be/";
  const auto request = read_text_file(dir + "request.json");
  const auto applied = read_text_file(dir + "apply-template.json");
  const auto tokenized = read_text_file(dir + "tokenize.json");
  const auto completion = read_text_file(dir + "completion.json");
  ASSERT_TRUE(request && applied && tokenized && completion) << dir;
  const auto prompt = http::parse_applied_template(*applied);
  ASSERT_TRUE(prompt) << prompt.error().message;
  // The chat template of the request's messages: each message's text is in the prompt.
  const json body = json::parse(*request);
  for (const auto& message : body["messages"]) {
    EXPECT_NE(prompt->find(message["content"].get<std::string>()), std::string::npos);
  }
  const auto tokens = http::parse_token_count(*tokenized);
  ASSERT_TRUE(tokens) << tokens.error().message;
  const auto timings = http::parse_completion_timings(*completion);
  ASSERT_TRUE(timings) << timings.error().message;
  EXPECT_EQ(static_cast<double>(*tokens), timings->prompt_n + timings->cache_n.value_or(0));
  // What the estimate says for the same request, against that count (why the server counts).
  auto workload = parse_workload(*request, "request.json");
  ASSERT_TRUE(workload) << workload.error().message;
  const std::uint64_t max_tokens = body["max_tokens"].get<std::uint64_t>();
  // The tiny model's vocabulary is byte-level: 533 tokens (BOS included) for 531 bytes of
  // ChatML, where the estimate says 129.
  EXPECT_EQ(*tokens, 533u);
  EXPECT_EQ(estimated_slot_tokens(workload->requests[0]) - max_tokens, 129u);
  // An older build's 404 page and a wrong shape are errors naming the endpoint's answer.
  EXPECT_FALSE(http::parse_token_count("File Not Found"));
  EXPECT_FALSE(http::parse_token_count(R"({"prompt": "x"})"));
  EXPECT_FALSE(http::parse_applied_template(R"({"tokens": []})"));
}

}  // namespace
}  // namespace gb10tune::bench
