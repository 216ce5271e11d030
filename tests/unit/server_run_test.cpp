#include "gb10tune/bench/server_run.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/fake_server.hpp"

namespace gb10tune::bench {
namespace {

using testing::FakeServer;
using testing::make_timings;

// A workload of `conversations` single-turn conversations named c0, c1, … whose user
// message is the conversation's name.
Workload small_workload(int conversations) {
  std::string text;
  for (int i = 0; i < conversations; ++i) {
    text += nlohmann::json{{"conversation", "c" + std::to_string(i)},
                           {"turns", {{{"user", "c" + std::to_string(i)}}}}}
                .dump() +
            "\n";
  }
  return parse_workload(text, "test").value();
}

struct Clock {
  double now = 100;
  double step = 2.5;  // every call advances the clock
  double operator()() {
    const double t = now;
    now += step;
    return t;
  }
};

ServerRunInputs inputs_for(const Workload& workload, FakeServer& server, Clock& clock) {
  ServerRunInputs inputs;
  inputs.workload = &workload;
  inputs.complete = [&server](const std::string& body) { return server.complete(body); };
  inputs.clock = [&clock] { return clock(); };
  return inputs;
}

TEST(ServerRun, WarmupIsDiscardedAndFiguresAreTheServers) {
  const Workload workload = small_workload(4);
  FakeServer server;
  server.timings = [](int n, const std::string&) {
    return make_timings(100 + n, 300 + n, 50, 20.0 + n);  // distinct per completion
  };
  Clock clock;
  ServerRunInputs inputs = inputs_for(workload, server, clock);
  inputs.options.warmup = 2;
  inputs.options.samples = 5;
  const auto levels = run_server_bench(inputs);
  ASSERT_TRUE(levels) << levels.error().message;
  ASSERT_EQ(levels->size(), 1u);
  const LevelResult& level = levels->front();
  EXPECT_EQ(server.requests.size(), 7u);
  ASSERT_EQ(level.samples.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    // Completions 2..6 were measured, exactly as reported.
    EXPECT_DOUBLE_EQ(level.samples[i].timings.predicted_per_second, 22.0 + i);
    EXPECT_DOUBLE_EQ(level.samples[i].timings.prompt_per_second, 302.0 + i);
    EXPECT_EQ(level.samples[i].round, i);
  }
  // The workload is walked in order and wraps around: c2 c3 c0 c1 c2 after c0 c1 warm-up.
  EXPECT_EQ(level.samples[0].request, "c2/1");
  EXPECT_EQ(level.samples[2].request, "c0/1");
  EXPECT_EQ(level.generated_tokens, 250u);
  EXPECT_DOUBLE_EQ(level.wall_seconds, 2.5);  // two clock reads around the measured rounds
  const MetricSummary decode = summarize_samples(Metric::decode_tps, level.samples);
  EXPECT_DOUBLE_EQ(decode.stats.median, 24.0);
}

TEST(ServerRun, DefaultSamplesAreOnePerWorkloadRequest) {
  const Workload workload = small_workload(3);
  FakeServer server;
  Clock clock;
  ServerRunInputs inputs = inputs_for(workload, server, clock);
  const auto levels = run_server_bench(inputs);
  ASSERT_TRUE(levels);
  EXPECT_EQ(levels->front().samples.size(), 3u);
  EXPECT_EQ(server.requests.size(), 4u);  // one warm-up round by default
}

TEST(ServerRun, ConcurrencyRunsSessionsInParallelAndSumsTheirRates) {
  const Workload workload = small_workload(6);
  FakeServer server;
  server.delay = std::chrono::milliseconds(30);
  // Each conversation has its own decode rate: c0 10 t/s, c1 11 t/s, …
  server.timings = [](int, const std::string& user) {
    return make_timings(200, 250, 40, 10.0 + std::stoi(user.substr(1)));
  };
  Clock clock;
  ServerRunInputs inputs = inputs_for(workload, server, clock);
  inputs.options.concurrency = {1, 3};
  inputs.options.samples = 2;
  inputs.options.warmup = 0;
  const auto levels = run_server_bench(inputs);
  ASSERT_TRUE(levels) << levels.error().message;
  ASSERT_EQ(levels->size(), 2u);
  EXPECT_EQ(server.max_in_flight, 3);  // the three sessions overlapped
  const LevelResult& one = (*levels)[0];
  EXPECT_EQ(one.concurrency, 1);
  EXPECT_EQ(one.round_totals, (std::vector<double>{10, 11}));
  const LevelResult& three = (*levels)[1];
  ASSERT_EQ(three.samples.size(), 6u);
  // Sessions start 6/3 = 2 requests apart: round 0 sends c0 c2 c4, round 1 c1 c3 c5.
  EXPECT_EQ(three.samples[0].request, "c0/1");
  EXPECT_EQ(three.samples[1].request, "c2/1");
  EXPECT_EQ(three.samples[2].request, "c4/1");
  EXPECT_EQ(three.samples[3].request, "c1/1");
  EXPECT_EQ(three.samples[1].session, 1);
  ASSERT_EQ(three.round_totals.size(), 2u);
  EXPECT_DOUBLE_EQ(three.round_totals[0], 10 + 12 + 14);
  EXPECT_DOUBLE_EQ(three.round_totals[1], 11 + 13 + 15);
  EXPECT_EQ(three.generated_tokens, 240u);
}

TEST(ServerRun, RequestIndexSpreadsSessionsOverTheWorkload) {
  EXPECT_EQ(request_index(20, 1, 0, 0), 0u);
  EXPECT_EQ(request_index(20, 1, 0, 25), 5u);
  EXPECT_EQ(request_index(20, 4, 1, 0), 5u);
  EXPECT_EQ(request_index(20, 4, 3, 3), 18u);
  EXPECT_EQ(request_index(2, 3, 2, 0), 1u);  // more sessions than requests: they share
}

TEST(ServerRun, FailedCompletionEndsTheRunNamingTheRequest) {
  const Workload workload = small_workload(2);
  FakeServer server;
  server.fail_at = 2;
  Clock clock;
  ServerRunInputs inputs = inputs_for(workload, server, clock);
  inputs.options.samples = 4;
  const auto levels = run_server_bench(inputs);
  ASSERT_FALSE(levels);
  EXPECT_EQ(levels.error().code, ExitCode::failed);
  EXPECT_NE(levels.error().message.find("request c0/1 (session 1 of 1) failed: connection refused"),
            std::string::npos)
      << levels.error().message;
}

TEST(ServerRun, CancelStopsBetweenRounds) {
  const Workload workload = small_workload(2);
  FakeServer server;
  Clock clock;
  std::atomic<bool> cancel{false};
  ServerRunInputs inputs = inputs_for(workload, server, clock);
  inputs.cancel = &cancel;
  inputs.progress = [&cancel](int, int round, int, bool, const std::vector<RequestSample>&) {
    if (round == 2) {
      cancel = true;
    }
  };
  const auto levels = run_server_bench(inputs);
  ASSERT_FALSE(levels);
  EXPECT_EQ(levels.error().code, ExitCode::interrupted);
  EXPECT_EQ(server.requests.size(), 2u);
}

TEST(ServerRun, BadOptionsAreUsageErrors) {
  const Workload workload = small_workload(1);
  FakeServer server;
  Clock clock;
  for (const ServerRunOptions& options :
       {ServerRunOptions{{}, 0, 1}, ServerRunOptions{{1, 0}, 0, 1}, ServerRunOptions{{1}, -1, 1},
        ServerRunOptions{{1}, 1, -1}}) {
    ServerRunInputs inputs = inputs_for(workload, server, clock);
    inputs.options = options;
    const auto levels = run_server_bench(inputs);
    ASSERT_FALSE(levels);
    EXPECT_EQ(levels.error().code, ExitCode::usage);
  }
  EXPECT_TRUE(server.requests.empty());
}

}  // namespace
}  // namespace gb10tune::bench
