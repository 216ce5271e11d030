// bench server's set-up in the core: the workload fitted to the server's slots (bench/workload),
// and a saved result never replaced without --force.
#include "gb10tune/bench/server_bench_setup.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::bench {
namespace {

// A workload of one conversation whose turns grow (the later turns carry the earlier ones).
Workload growing_workload() {
  std::string line = R"({"conversation": "grow", "turns": [)";
  for (int turn = 0; turn < 4; ++turn) {
    line += fmt::format(R"({}{{"user": "{}", "assistant": "{}"}})", turn == 0 ? "" : ", ",
                        std::string(2000, 'u'), std::string(2000, 'a'));
  }
  line += "]}";
  auto workload = parse_workload(line, "grow.jsonl");
  EXPECT_TRUE(workload) << workload.error().message;
  return *workload;
}

TEST(ServerBenchSetup, MaxContextDropsTheLongerTurnsAndSaysSoInTheSource) {
  Workload workload = growing_workload();
  const std::uint64_t first = estimated_slot_tokens(workload.requests.at(0));
  const std::uint64_t second = estimated_slot_tokens(workload.requests.at(1));
  const auto dropped = fit_workload(workload, second, 0);
  ASSERT_TRUE(dropped) << dropped.error().message;
  ASSERT_EQ(dropped->size(), 1u);
  EXPECT_EQ(dropped->front(), fmt::format("--max-context {0}: 2 of 4 requests left out (longer "
                                          "than {0} tokens, estimated)",
                                          second));
  ASSERT_EQ(workload.requests.size(), 2u);
  EXPECT_EQ(workload.source, fmt::format("grow.jsonl (--max-context {})", second));
  EXPECT_LT(first, second);
}

TEST(ServerBenchSetup, ARequestLongerThanASlotIsLeftOutBeforeTheRun) {
  Workload workload = growing_workload();
  const std::uint64_t last = estimated_slot_tokens(workload.requests.back());
  const auto trimmed = fit_workload(workload, 0, last - 1);
  ASSERT_TRUE(trimmed) << trimmed.error().message;
  ASSERT_EQ(trimmed->size(), 1u);
  EXPECT_NE(trimmed->front().find(fmt::format("1 of 4 requests left out: longer than the "
                                              "server's slot of {} tokens",
                                              last - 1)),
            std::string::npos)
      << trimmed->front();
  EXPECT_EQ(workload.requests.size(), 3u);
  Workload fits = growing_workload();
  const auto kept = fit_workload(fits, 0, last);
  ASSERT_TRUE(kept);
  EXPECT_TRUE(kept->empty());
  EXPECT_EQ(fits.requests.size(), 4u);
  // A slot no request fits: an error naming it and the fix.
  Workload none = growing_workload();
  const auto refused = fit_workload(none, 0, 100);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ExitCode::failed);
  EXPECT_NE(refused.error().message.find("slot of 100 tokens"), std::string::npos)
      << refused.error().message;
}

TEST(ServerBenchSetup, AMaxContextBelowEveryRequestIsAUsageError) {
  Workload workload = growing_workload();
  const auto refused = fit_workload(workload, 1, 0);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ExitCode::usage);
  EXPECT_NE(refused.error().message.find("every request of grow.jsonl"), std::string::npos);
}

TEST(ServerBenchSetup, ASavedResultIsNotReplacedWithoutForce) {
  const testing::TempDir state;
  platform::Environment env;
  env.set("XDG_STATE_HOME", state.path().string());
  env.set("HOME", state.path().string());
  EXPECT_TRUE(check_save_target("base", env, false));
  const auto saved = save_result(nlohmann::json{{"x", 1}}, "base", env);
  ASSERT_TRUE(saved) << saved.error().message;
  EXPECT_TRUE(std::filesystem::exists(*saved));
  const Status again = check_save_target("base", env, false);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ExitCode::usage);
  EXPECT_NE(again.error().message.find("--force"), std::string::npos);
  EXPECT_TRUE(check_save_target("base", env, true));
}

}  // namespace
}  // namespace gb10tune::bench
