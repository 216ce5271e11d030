#include "gb10tune/bench/workload.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gb10tune::bench {
namespace {

using nlohmann::json;

std::string line(const json& doc) {
  return doc.dump() + "\n";
}

TEST(Workload, ConversationExpandsIntoGrowingRequests) {
  const json conversation = {{"conversation", "essay"},
                             {"system", "be brief"},
                             {"max_tokens", 64},
                             {"turns",
                              {{{"user", "u1"}, {"assistant", "a1"}},
                               {{"user", "u2"}, {"assistant", "a2"}, {"max_tokens", 32}},
                               {{"user", "u3"}}}}};
  const auto workload = parse_workload(line(conversation), "test.jsonl");
  ASSERT_TRUE(workload) << workload.error().message;
  EXPECT_EQ(workload->conversations, 1u);
  ASSERT_EQ(workload->requests.size(), 3u);
  EXPECT_EQ(workload->requests[0].name, "essay/1");
  EXPECT_EQ(workload->requests[2].name, "essay/3");
  // Turn k carries the system prompt, k user messages and the k-1 recorded replies.
  const json& last = workload->requests[2].body["messages"];
  ASSERT_EQ(last.size(), 6u);
  EXPECT_EQ(last[0]["role"], "system");
  EXPECT_EQ(last[2]["content"], "a1");
  EXPECT_EQ(last[4]["content"], "a2");
  EXPECT_EQ(last[5]["content"], "u3");
  EXPECT_EQ(workload->requests[0].body["max_tokens"], 64);
  EXPECT_EQ(workload->requests[1].body["max_tokens"], 32);
  EXPECT_LT(workload->requests[0].context_chars, workload->requests[1].context_chars);
  EXPECT_LT(workload->requests[1].context_chars, workload->requests[2].context_chars);
}

TEST(Workload, AConversationsOtherFieldsGoWithEveryTurn) {
  // ignore_eos makes a random-weight model decode max_tokens every time (docs/tune.md).
  const json conversation = {{"conversation", "fixed"},
                             {"max_tokens", 128},
                             {"ignore_eos", true},
                             {"temperature", 0},
                             {"stream", true},
                             {"turns", {{{"user", "u1"}, {"assistant", "a1"}}, {{"user", "u2"}}}}};
  const auto workload = parse_workload(line(conversation), "fixed.jsonl");
  ASSERT_TRUE(workload) << workload.error().message;
  ASSERT_EQ(workload->requests.size(), 2u);
  for (const WorkloadRequest& request : workload->requests) {
    const json body = json::parse(request_json(request));
    EXPECT_EQ(body["ignore_eos"], true) << body;
    EXPECT_EQ(body["temperature"], 0);
    EXPECT_EQ(body["max_tokens"], 128);
    EXPECT_EQ(body["stream"], false);
    EXPECT_FALSE(body.contains("turns"));
    EXPECT_FALSE(body.contains("conversation"));
    EXPECT_FALSE(body.contains("system"));
  }
}

TEST(Workload, RequestLinesAreSentAsWritten) {
  const json request = {{"name", "mine"},
                        {"messages", {{{"role", "user"}, {"content", "hello"}}}},
                        {"temperature", 0.2},
                        {"stream", true}};
  const json unnamed = {{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"max_tokens", 9}};
  const auto workload = parse_workload(line(request) + "\n  \n" + line(unnamed), "own.jsonl");
  ASSERT_TRUE(workload) << workload.error().message;
  ASSERT_EQ(workload->requests.size(), 2u);
  EXPECT_EQ(workload->requests[0].name, "mine");
  EXPECT_EQ(workload->requests[1].name, "line 4");  // blank lines count
  const json body = json::parse(request_json(workload->requests[0]));
  EXPECT_EQ(body["temperature"], 0.2);
  EXPECT_EQ(body["max_tokens"], 256);  // the default
  EXPECT_EQ(body["stream"], false);    // timings come with the final, non-streamed answer
  EXPECT_FALSE(body.contains("name"));
  EXPECT_EQ(json::parse(request_json(workload->requests[1]))["max_tokens"], 9);
}

TEST(Workload, ErrorsNameTheLineAndAreUsageErrors) {
  const std::string good = line({{"messages", {{{"role", "user"}, {"content", "x"}}}}});
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {good + "{not json\n", "line 2: not a JSON object"},
      {good + "[1,2]\n", "line 2: not a JSON object"},
      {line({{"prompt", "x"}}), "line 1: neither"},
      {line({{"messages", json::array()}}), "non-empty array"},
      {line({{"messages", {{{"content", "x"}}}}}), "message 1 needs a string \"role\""},
      {line({{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"max_tokens", 0}}),
       "positive integer"},
      {line({{"conversation", "c"}, {"turns", {{{"user", "a"}}, {{"user", "b"}}}}}),
       "turn 1 has no \"assistant\" reply"},
      {line({{"conversation", "c"}, {"turns", json::array()}}), "non-empty \"turns\""},
      {line({{"conversation", ""}, {"turns", {{{"user", "a"}}}}}), "non-empty string"},
      {"\n\n", "holds no requests"},
  };
  for (const Case& c : cases) {
    const auto workload = parse_workload(c.text, "w.jsonl");
    ASSERT_FALSE(workload) << c.text;
    EXPECT_EQ(workload.error().code, ExitCode::usage);
    EXPECT_NE(workload.error().message.find(c.expected), std::string::npos)
        << workload.error().message;
    EXPECT_NE(workload.error().message.find("w.jsonl"), std::string::npos);
  }
}

TEST(DefaultWorkload, IsSeveralGrowingConversationsOfWritingAndCoding) {
  const Workload& workload = default_workload();
  EXPECT_GE(workload.conversations, 4u);
  EXPECT_GE(workload.requests.size(), 12u);
  std::size_t code_requests = 0;
  std::size_t total_chars = 0;
  for (std::size_t i = 0; i < workload.requests.size(); ++i) {
    const WorkloadRequest& request = workload.requests[i];
    const json& messages = request.body["messages"];
    const std::string last = messages.back()["content"].get<std::string>();
    if (last.find("```") != std::string::npos || last.find("test") != std::string::npos) {
      ++code_requests;
    }
    total_chars += request.context_chars;
    EXPECT_EQ(messages.back()["role"], "user");
    EXPECT_GT(request.body["max_tokens"].get<int>(), 100) << request.name;
    // Later turns of a conversation carry the earlier ones (K5: growing context).
    if (i > 0 && request.name.substr(0, request.name.find('/')) ==
                     workload.requests[i - 1].name.substr(0, request.name.find('/'))) {
      EXPECT_GT(request.context_chars, workload.requests[i - 1].context_chars) << request.name;
      EXPECT_GT(messages.size(), workload.requests[i - 1].body["messages"].size());
    }
  }
  EXPECT_GE(code_requests, 3u);
  // Realistic context: the longest request holds several thousand characters.
  std::size_t longest = 0;
  for (const WorkloadRequest& request : workload.requests) {
    longest = std::max(longest, request.context_chars);
  }
  EXPECT_GT(longest, 4000u);
  EXPECT_LT(total_chars, 1000000u);
}

}  // namespace
}  // namespace gb10tune::bench
