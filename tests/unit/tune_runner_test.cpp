// The tune loop over a fake world: the budget holds, a refused candidate is never started, a
// failed one is never kept, Ctrl-C in the middle of a restart and the memory floor leave the
// original server running, a resume skips what the journal measured, and per-request knobs
// reach the requests without a restart.
#include "gb10tune/tune/tune_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/fake_tune.hpp"

namespace gb10tune::tune {
namespace {

using nlohmann::json;

const Knob kRunnerDepth{"draft_n_max", "--spec-draft-n-max", "speculative.n_max", false,
                        false,         "draft depth"};
const Knob kRunnerUbatch{"ubatch", "-ub", "", true, false, "micro-batch"};

// Depth walked from 4 (restart, or per request), then the micro-batch from 512.
std::vector<KnobPlan> runner_knobs(ApplyMode depth_mode = ApplyMode::restart) {
  return {KnobPlan{&kRunnerDepth, depth_mode, {4, 5, 6, 7, 3, 2}, true, ""},
          KnobPlan{&kRunnerUbatch, ApplyMode::restart, {512, 1024, 2048, 256, 128}, true, ""}};
}

TuneOptions runner_options(ApplyMode depth_mode = ApplyMode::restart) {
  TuneOptions options;
  options.knobs = runner_knobs(depth_mode);
  options.start = {{"draft_n_max", 4}, {"ubatch", 512}};
  options.samples = 8;
  options.budget_s = 100000;
  options.header.model_path = "/models/m.gguf";
  options.header.build = "b1-test";
  options.header.workload = "fake";
  options.header.start = options.start;
  return options;
}

// Deeper drafts are faster up to 6 (+8% a step), then slower; a smaller micro-batch is 1% slower.
double runner_speed(const json& settings, const json& fields) {
  const int depth = fields.contains("speculative.n_max") ? fields["speculative.n_max"].get<int>()
                                                         : settings.value("draft_n_max", 4);
  const double by_depth = depth <= 6 ? 1.0 + 0.08 * (depth - 4) : 1.16 - 0.1 * (depth - 6);
  return by_depth * (settings.value("ubatch", 512) < 512 ? 0.99 : 1.0);
}

testing::FakeTuneWorld runner_world() {
  testing::FakeTuneWorld world;
  world.original = {{"draft_n_max", 4}, {"ubatch", 512}};
  world.speed = runner_speed;
  return world;
}

bool runner_started(const testing::FakeTuneWorld& world, const std::string& key, int value) {
  return std::any_of(world.started.begin(), world.started.end(),
                     [&](const json& s) { return s.value(key, -1) == value; });
}

TEST(TuneRunner, FindsTheFastestDepthPairedAndLeavesTheOriginalRunning) {
  testing::FakeTuneWorld world = runner_world();
  const std::atomic<bool> cancel{false};
  const TuneRun run = run_tune(runner_options(), world.seam(), cancel);
  ASSERT_FALSE(run.error) << run.error->message;
  EXPECT_EQ(run.result.stopped, StopReason::done);
  EXPECT_EQ(run.result.winner.settings.value("draft_n_max", 0), 6);
  EXPECT_EQ(run.result.winner.settings.value("ubatch", 0), 512);
  EXPECT_EQ(run.result.gain.verdict, bench::Verdict::better);
  EXPECT_NEAR(run.result.gain.ratio, 1.16, 0.01);
  ASSERT_TRUE(run.result.drift);
  EXPECT_NEAR(run.result.drift->ratio, 1.0, 1e-9);
  // The original was started again once, and runs.
  EXPECT_TRUE(world.original_running);
  EXPECT_EQ(world.running, world.original);
  EXPECT_EQ(tune_exit_code(run), ExitCode::ok);
  // Every measurement ran the same requests after a warm-up.
  for (const MeasureAsk& ask : world.asks) {
    EXPECT_EQ(ask.warmup, 1);
    EXPECT_EQ(ask.samples, 8);
  }
}

TEST(TuneRunner, BudgetIsRespected) {
  testing::FakeTuneWorld world = runner_world();
  TuneOptions options = runner_options();
  options.budget_s = 60;  // a candidate costs 10 s of restart and 9 s of requests
  const std::atomic<bool> cancel{false};
  const TuneRun run = run_tune(options, world.seam(), cancel);
  EXPECT_EQ(run.result.stopped, StopReason::budget);
  EXPECT_FALSE(run.error);
  const double candidate_s = world.restart_s + 9 * world.request_s;
  EXPECT_LE(run.result.elapsed_s, options.budget_s + candidate_s) << run.result.elapsed_s;
  EXPECT_GE(run.result.candidates.size(), 1u);
  EXPECT_TRUE(world.original_running);
}

TEST(TuneRunner, ACandidateThePlanRefusesIsNeverStarted) {
  testing::FakeTuneWorld world = runner_world();
  world.plan_check = [](const json& settings) {
    return settings.value("ubatch", 0) > 512
               ? PlanCheck{false, "the plan does not fit in memory; nothing was started"}
               : PlanCheck{};
  };
  const std::atomic<bool> cancel{false};
  const TuneRun run = run_tune(runner_options(), world.seam(), cancel);
  ASSERT_FALSE(run.error) << run.error->message;
  const auto refused =
      std::find_if(run.result.candidates.begin(), run.result.candidates.end(),
                   [](const CandidateResult& c) { return c.outcome == Outcome::does_not_fit; });
  ASSERT_NE(refused, run.result.candidates.end());
  EXPECT_EQ(refused->candidate.settings.value("ubatch", 0), 1024);
  EXPECT_EQ(refused->why, "the plan does not fit in memory; nothing was started");
  EXPECT_FALSE(runner_started(world, "ubatch", 1024));
  EXPECT_FALSE(runner_started(world, "ubatch", 2048));
  EXPECT_TRUE(runner_started(world, "ubatch", 256));  // the other direction still walks
}

TEST(TuneRunner, CtrlCInTheMiddleOfARestartRestoresTheOriginal) {
  testing::FakeTuneWorld world = runner_world();
  std::atomic<bool> cancel{false};
  world.during_restart = [&cancel](int restart) {
    if (restart == 1) {
      cancel.store(true);
    }
  };
  const TuneRun run = run_tune(runner_options(), world.seam(), cancel);
  EXPECT_EQ(run.result.stopped, StopReason::interrupted);
  EXPECT_EQ(tune_exit_code(run), ExitCode::interrupted);
  EXPECT_EQ(world.started.size(), 2u);  // nothing after the interrupted one
  // The original ran again after the first candidate (the incumbent measured after it), and
  // once more at the end.
  EXPECT_EQ(world.restores, 2);
  EXPECT_TRUE(world.original_running);
  EXPECT_EQ(world.running, world.original);
  // The interrupted candidate is not journalled: a resume measures it.
  EXPECT_EQ(run.result.candidates.size(), 1u);
}

TEST(TuneRunner, AFailedCandidateIsNeverKeptAndEndsTheTune) {
  testing::FakeTuneWorld world = runner_world();
  world.start_fails = [](const json& settings) { return settings.value("draft_n_max", 0) == 6; };
  const std::atomic<bool> cancel{false};
  const TuneRun run = run_tune(runner_options(), world.seam(), cancel);
  EXPECT_EQ(run.result.stopped, StopReason::failed);
  ASSERT_TRUE(run.error);
  EXPECT_EQ(tune_exit_code(run), ExitCode::server_failed);
  ASSERT_FALSE(run.result.candidates.empty());
  const CandidateResult& last = run.result.candidates.back();
  EXPECT_EQ(last.outcome, Outcome::failed);
  EXPECT_NE(last.why.find("out of memory"), std::string::npos) << last.why;
  // The winner is the last good incumbent (depth 5), never the failed one.
  EXPECT_EQ(run.result.winner.settings.value("draft_n_max", 0), 5);
  EXPECT_TRUE(world.original_running);
  EXPECT_EQ(world.restores, 2);  // after the first candidate (its incumbent run), and at the end
}

TEST(TuneRunner, TheMemoryFloorEndsItAndRestores) {
  testing::FakeTuneWorld world = runner_world();
  world.available = [&world]() -> std::uint64_t {
    return world.started.size() >= 2 ? 1'000'000'000ull : 100'000'000'000ull;
  };
  TuneOptions options = runner_options();
  options.floor_bytes = 6'000'000'000ull;
  const std::atomic<bool> cancel{false};
  const TuneRun run = run_tune(options, world.seam(), cancel);
  EXPECT_EQ(run.result.stopped, StopReason::memory_floor);
  EXPECT_EQ(tune_exit_code(run), ExitCode::failed);
  EXPECT_EQ(world.started.size(), 2u);
  EXPECT_TRUE(world.original_running);
}

TEST(TuneRunner, ResumeSkipsWhatTheJournalMeasured) {
  testing::FakeTuneWorld first = runner_world();
  std::atomic<bool> cancel{false};
  first.during_restart = [&cancel](int restart) {
    if (restart == 4) {
      cancel.store(true);
    }
  };
  const TuneRun interrupted = run_tune(runner_options(), first.seam(), cancel);
  ASSERT_EQ(interrupted.result.stopped, StopReason::interrupted);
  const std::size_t measured = interrupted.result.candidates.size();
  ASSERT_GE(measured, 2u);
  auto journal = parse_journal(testing::journal_text(first.journal), "tune-journal.jsonl");
  ASSERT_TRUE(journal) << journal.error().message;

  testing::FakeTuneWorld second = runner_world();
  TuneOptions options = runner_options();
  options.resume = &*journal;
  const std::atomic<bool> no_cancel{false};
  const TuneRun resumed = run_tune(options, second.seam(), no_cancel);
  ASSERT_FALSE(resumed.error) << resumed.error->message;
  EXPECT_EQ(resumed.result.stopped, StopReason::done);
  // The journal's candidates are not measured again: only the incumbents among them run again
  // (the incumbent is measured around every candidate), and the resumed tune goes on from the
  // next candidate.
  for (std::size_t i = 0; i < measured; ++i) {
    const CandidateResult& done = interrupted.result.candidates[i];
    if (done.outcome != Outcome::better) {
      EXPECT_EQ(std::count(second.started.begin(), second.started.end(), done.candidate.settings),
                0)
          << done.candidate.settings;
    }
  }
  ASSERT_GT(resumed.result.candidates.size(), measured);
  EXPECT_EQ(resumed.result.candidates[measured].candidate.index, static_cast<int>(measured) + 1);
  EXPECT_EQ(resumed.result.winner.settings.value("draft_n_max", 0), 6);
}

TEST(TuneRunner, AResumeOfAnotherTuneIsRefusedBeforeAnythingRuns) {
  testing::FakeTuneWorld first = runner_world();
  const std::atomic<bool> cancel{false};
  run_tune(runner_options(), first.seam(), cancel);
  auto journal = parse_journal(testing::journal_text(first.journal), "tune-journal.jsonl");
  ASSERT_TRUE(journal) << journal.error().message;
  testing::FakeTuneWorld second = runner_world();
  TuneOptions options = runner_options();
  options.header.goal = Goal::prefill;
  options.resume = &*journal;
  const TuneRun refused = run_tune(options, second.seam(), cancel);
  ASSERT_TRUE(refused.error);
  EXPECT_EQ(refused.error->code, ExitCode::usage);
  EXPECT_TRUE(second.asks.empty());
  EXPECT_TRUE(second.started.empty());
}

TEST(TuneRunner, TheGridMeasuresEveryCombinationAndKeepsTheBest) {
  testing::FakeTuneWorld world = runner_world();
  TuneOptions options = runner_options();
  options.strategy = Strategy::grid;
  const std::atomic<bool> cancel{false};
  const TuneRun run = run_tune(options, world.seam(), cancel);
  ASSERT_FALSE(run.error) << run.error->message;
  EXPECT_EQ(run.result.strategy, Strategy::grid);
  EXPECT_EQ(run.result.stopped, StopReason::done);
  EXPECT_EQ(run.result.candidates.size(), 6u * 5u - 1u);
  EXPECT_EQ(run.result.winner.settings.value("draft_n_max", 0), 6);
  EXPECT_GE(run.result.winner.settings.value("ubatch", 0), 512);
  // Every combination but the start was started (the start is the original, restored).
  for (const CandidateResult& c : run.result.candidates) {
    EXPECT_NE(std::find(world.started.begin(), world.started.end(), c.candidate.settings),
              world.started.end())
        << c.candidate.settings;
  }
  EXPECT_TRUE(world.original_running);
  EXPECT_EQ(world.running, world.original);
}

TEST(TuneRunner, AGridJournalResumesOnlyAsAGrid) {
  testing::FakeTuneWorld first = runner_world();
  TuneOptions options = runner_options();
  options.strategy = Strategy::grid;
  options.header.strategy = Strategy::grid;
  std::atomic<bool> cancel{false};
  first.during_restart = [&cancel](int restart) {
    if (restart == 4) {
      cancel.store(true);
    }
  };
  const TuneRun interrupted = run_tune(options, first.seam(), cancel);
  ASSERT_EQ(interrupted.result.stopped, StopReason::interrupted);
  auto journal = parse_journal(testing::journal_text(first.journal), "tune-journal.jsonl");
  ASSERT_TRUE(journal) << journal.error().message;
  EXPECT_EQ(journal->header.strategy, Strategy::grid);
  const std::atomic<bool> no_cancel{false};
  testing::FakeTuneWorld coordinate = runner_world();
  TuneOptions other = runner_options();
  other.resume = &*journal;
  const TuneRun refused = run_tune(other, coordinate.seam(), no_cancel);
  ASSERT_TRUE(refused.error);
  EXPECT_NE(refused.error->message.find("strategy"), std::string::npos);
  EXPECT_TRUE(coordinate.started.empty());
  testing::FakeTuneWorld second = runner_world();
  options.resume = &*journal;
  const TuneRun resumed = run_tune(options, second.seam(), no_cancel);
  ASSERT_FALSE(resumed.error) << resumed.error->message;
  EXPECT_EQ(resumed.result.candidates.size(), 6u * 5u - 1u);
}

TEST(TuneRunner, PerRequestKnobsAreSentWithEachRequestWithoutARestart) {
  testing::FakeTuneWorld world = runner_world();
  TuneOptions options = runner_options(ApplyMode::per_request);
  options.knobs.pop_back();  // the depth alone
  const std::atomic<bool> cancel{false};
  const TuneRun run = run_tune(options, world.seam(), cancel);
  ASSERT_FALSE(run.error) << run.error->message;
  EXPECT_TRUE(world.started.empty());
  EXPECT_EQ(world.restores, 0);
  ASSERT_GE(world.asks.size(), 3u);
  EXPECT_EQ(world.asks[0].fields, json({{"speculative.n_max", 4}}));
  EXPECT_EQ(world.asks[1].fields, json({{"speculative.n_max", 5}}));
  EXPECT_EQ(run.result.winner.settings.value("draft_n_max", 0), 6);
}

TEST(TuneRunner, PrefillAsksForUncachedPromptsAndLowerIsBetter) {
  testing::FakeTuneWorld world = runner_world();
  TuneOptions options = runner_options();
  options.goal = Goal::prefill;
  const std::atomic<bool> cancel{false};
  const TuneRun run = run_tune(options, world.seam(), cancel);
  ASSERT_FALSE(run.error) << run.error->message;
  EXPECT_EQ(world.asks.front().fields.value("cache_prompt", true), false);
  EXPECT_FALSE(run.result.higher_is_better);
  EXPECT_EQ(run.result.winner.settings.value("draft_n_max", 0), 6);  // the shortest prefill
}

TEST(TuneRunnerGoal, ValuesPairByRequestOrRound) {
  bench::LevelResult level;
  bench::RequestSample a;
  a.request = "essay/1";
  a.timings.predicted_per_second = 20;
  a.timings.prompt_ms = 150;
  bench::RequestSample b = a;
  b.request = "essay/2";
  b.timings.predicted_per_second = 0;  // not reported
  level.samples = {a, b};
  level.round_totals = {20, 0};
  EXPECT_EQ(goal_values(Goal::decode, level), (std::vector<double>{20, 0}));
  EXPECT_EQ(goal_values(Goal::prefill, level), (std::vector<double>{150, 150}));
  EXPECT_EQ(goal_requests(Goal::decode, level), (std::vector<std::string>{"essay/1", "essay/2"}));
  EXPECT_EQ(goal_requests(Goal::throughput, level),
            (std::vector<std::string>{"round 1", "round 2"}));
  EXPECT_EQ(metric_label(Goal::throughput, 4), "total decode t/s @4");
}

}  // namespace
}  // namespace gb10tune::tune
