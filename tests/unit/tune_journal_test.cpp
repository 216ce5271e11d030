#include "gb10tune/tune/tune_journal.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "gb10tune/tune/coordinate_search.hpp"
#include "gb10tune/tune/grid_search.hpp"
#include "support/tune_walk.hpp"

namespace gb10tune::tune {
namespace {

using nlohmann::json;

const std::vector<std::string> kJournalRequests{"write/1", "write/2", "code/1", "code/2"};

std::vector<KnobPlan> journal_knobs() {
  KnobPlan depth;
  depth.knob = find_knob("draft_n_max");
  depth.values = {4, 5, 6, 7, 8, 3, 2, 1};
  KnobPlan ubatch;
  ubatch.knob = find_knob("ubatch");
  ubatch.values = {512, 1024, 2048, 256, 128};
  return {depth, ubatch};
}

const json kJournalStart = {{"draft_n_max", 4}, {"ubatch", 512}};

// The decode rates of `settings` on the four requests: best at n_max 6 and ubatch 1024.
Measurement journal_measure(const json& settings) {
  const double depth = settings["draft_n_max"].get<double>();
  const double ubatch = settings["ubatch"].get<double>();
  const double speed = 1 - 0.04 * std::abs(depth - 6) - 0.02 * std::abs(std::log2(ubatch / 1024));
  std::vector<double> values;
  for (const double rate : {130.0, 310.0, 180.0, 250.0}) {
    values.push_back(rate * speed);
  }
  return make_measurement(settings, kJournalRequests, values);
}

JournalHeader journal_header() {
  return {.model_path = "/models/qwen.gguf",
          .build = "b7000-3f545be",
          .goal = Goal::decode,
          .concurrency = 1,
          .workload = "built-in default workload (sha256 1f3a…)",
          .start = kJournalStart,
          .started_at = "2026-12-02T10:00:00Z"};
}

// Measures `steps` candidates of `search` (all of them when 0), as the runner would, a refused
// one when its ubatch is 2048; returns what it measured and the start.
std::vector<CandidateResult> journal_run(Search& search, std::size_t steps, Measurement& start) {
  start = journal_measure(kJournalStart);
  const auto refused = [](const json& settings) {
    return settings["ubatch"] == 2048 ? std::string("needs 1.2 GiB more than is available") : "";
  };
  return testing::walk_tune(search, start, journal_measure, refused,
                            {.restart_s = 12.5, .warmup_s = 3, .samples_s = 40.25, .samples = 4},
                            steps)
      .candidates;
}

std::string journal_text(const std::vector<CandidateResult>& results, const Measurement& start) {
  std::string text = journal_header_line(journal_header()).dump() + "\n";
  text += journal_start_line(start).dump() + "\n";
  for (const CandidateResult& r : results) {
    text += journal_candidate_line(r).dump() + "\n";
  }
  return text;
}

TEST(TuneJournal, LinesRoundTrip) {
  CoordinateSearch search(journal_knobs(), kJournalStart);
  Measurement start;
  const auto results = journal_run(search, 0, start);
  ASSERT_GE(results.size(), 6u);
  const std::string text = journal_text(results, start);
  const auto journal = parse_journal(text, "tune-journal.jsonl");
  ASSERT_TRUE(journal) << journal.error().message;
  EXPECT_EQ(journal_header_line(journal->header), journal_header_line(journal_header()));
  ASSERT_TRUE(journal->start);
  EXPECT_EQ(journal->start->stats.median, start.stats.median);
  ASSERT_EQ(journal->candidates.size(), results.size());
  EXPECT_EQ(journal_text(journal->candidates, *journal->start), text);  // line for line
  EXPECT_TRUE(std::any_of(results.begin(), results.end(), [](const CandidateResult& r) {
    return r.outcome == Outcome::does_not_fit;
  }));
}

TEST(TuneJournal, ACutOffLastLineIsDropped) {
  CoordinateSearch search(journal_knobs(), kJournalStart);
  Measurement start;
  const auto results = journal_run(search, 3, start);
  const std::string text = journal_text(results, start);
  const std::string cut = text.substr(0, text.size() - 40);  // killed mid-write
  const auto journal = parse_journal(cut, "j.jsonl");
  ASSERT_TRUE(journal) << journal.error().message;
  EXPECT_EQ(journal->candidates.size(), 2u);
  // A journal whose only line was cut off holds no tune.
  const auto empty = parse_journal(text.substr(0, 30), "j.jsonl");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, ExitCode::usage);
  EXPECT_NE(empty.error().message.find("no header"), std::string::npos);
  EXPECT_FALSE(parse_journal("", "j.jsonl"));
}

TEST(TuneJournal, DamageElsewhereIsAnErrorNamingTheLine) {
  CoordinateSearch search(journal_knobs(), kJournalStart);
  Measurement start;
  const auto results = journal_run(search, 3, start);
  std::vector<std::string> lines;
  lines.push_back(journal_header_line(journal_header()).dump());
  lines.push_back(journal_start_line(start).dump());
  for (const CandidateResult& r : results) {
    lines.push_back(journal_candidate_line(r).dump());
  }
  const auto join = [](const std::vector<std::string>& ls) {
    std::string out;
    for (const std::string& l : ls) {
      out += l + "\n";
    }
    return out;
  };
  const auto expect_damage = [&](std::vector<std::string> damaged, std::size_t line,
                                 std::string_view what) {
    const auto journal = parse_journal(join(damaged), "/state/tune-journal.jsonl");
    ASSERT_FALSE(journal) << what;
    EXPECT_EQ(journal.error().code, ExitCode::usage);
    const std::string& m = journal.error().message;
    EXPECT_NE(m.find(fmt::format("/state/tune-journal.jsonl:{}:", line)), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
    EXPECT_NE(m.find("delete /state/tune-journal.jsonl"), std::string::npos) << m;
  };
  auto cut_middle = lines;
  cut_middle[3] = cut_middle[3].substr(0, 20);
  expect_damage(cut_middle, 4, "not valid JSON");
  auto bad_field = lines;
  json last = json::parse(lines.back());
  last.erase("outcome");
  bad_field.back() = last.dump();
  expect_damage(bad_field, lines.size(), "missing");  // valid JSON at the end: not a cut
  auto no_header = lines;
  no_header.erase(no_header.begin());
  expect_damage(no_header, 1, "header");
  auto early = lines;
  std::swap(early[1], early[2]);
  expect_damage(early, 2, "before the start");
  auto twice = lines;
  twice.push_back(lines[0]);
  expect_damage(twice, lines.size() + 1, "second header");
  auto restarted = lines;
  restarted.insert(restarted.begin() + 3, lines[1]);
  expect_damage(restarted, 4, "second measurement of the start");
  auto unknown = lines;
  unknown.insert(unknown.begin() + 2, R"({"type": "note"})");
  expect_damage(unknown, 3, "unknown line type 'note'");
}

TEST(TuneJournal, ResumeMismatchNamesTheField) {
  Journal journal;
  journal.header = journal_header();
  EXPECT_EQ(resume_mismatch(journal, journal_header()), "");
  JournalHeader other = journal_header();
  other.started_at = "2026-12-03T08:00:00Z";  // when it started does not matter
  EXPECT_EQ(resume_mismatch(journal, other), "");
  other.build = "b7100-aaaaaaa";
  EXPECT_EQ(resume_mismatch(journal, other),
            "build: the journal's is b7000-3f545be, this tune's is b7100-aaaaaaa");
  other = journal_header();
  other.goal = Goal::throughput;
  EXPECT_NE(resume_mismatch(journal, other).find("goal: the journal's is decode"),
            std::string::npos);
  other = journal_header();
  other.start["ubatch"] = 256;
  EXPECT_NE(resume_mismatch(journal, other).find("start settings"), std::string::npos);
  other = journal_header();
  other.workload = "my.jsonl (sha256 9e…)";
  EXPECT_NE(resume_mismatch(journal, other).find("workload"), std::string::npos);
  other = journal_header();
  other.model_path = "/models/other.gguf";
  EXPECT_NE(resume_mismatch(journal, other).find("model"), std::string::npos);
  other = journal_header();
  other.concurrency = 4;
  EXPECT_NE(resume_mismatch(journal, other).find("concurrency"), std::string::npos);
  other = journal_header();
  other.strategy = Strategy::grid;
  EXPECT_EQ(resume_mismatch(journal, other),
            "strategy: the journal's is coordinate, this tune's is grid");
}

TEST(TuneJournal, TheStrategyRoundTripsAndAnOlderJournalIsACoordinateOne) {
  JournalHeader grid = journal_header();
  grid.strategy = Strategy::grid;
  const Measurement start = journal_measure(kJournalStart);
  const std::string start_line = journal_start_line(start).dump() + "\n";
  const auto read = parse_journal(journal_header_line(grid).dump() + "\n" + start_line, "j");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->header.strategy, Strategy::grid);
  json older = journal_header_line(journal_header());
  older.erase("strategy");
  const auto old = parse_journal(older.dump() + "\n" + start_line, "j");
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(old->header.strategy, Strategy::coordinate);
  older["strategy"] = "random";
  const auto bad = parse_journal(older.dump() + "\n" + start_line, "j");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'strategy' is not a strategy ('random')"), std::string::npos)
      << bad.error().message;
}

// tune --depth: the depth decode is measured at round-trips, a resume at another depth is refused,
// and a journal written before --depth measured the prompts as written (depth 0).
TEST(TuneJournal, TheDepthRoundTripsAndAResumeAtAnotherIsRefused) {
  JournalHeader deep = journal_header();
  deep.depth = 7631;
  const Measurement start = journal_measure(kJournalStart);
  const std::string start_line = journal_start_line(start).dump() + "\n";
  const auto read = parse_journal(journal_header_line(deep).dump() + "\n" + start_line, "j");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->header.depth, 7631u);
  EXPECT_EQ(resume_mismatch(*read, deep), "");
  JournalHeader shallower = deep;
  shallower.depth = 4000;
  EXPECT_EQ(resume_mismatch(*read, shallower), "depth: the journal's is 7631, this tune's is 4000");
  json older = journal_header_line(journal_header());
  older.erase("depth");
  const auto old = parse_journal(older.dump() + "\n" + start_line, "j");
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(old->header.depth, 0u);
  older["depth"] = "deep";
  const auto bad = parse_journal(older.dump() + "\n" + start_line, "j");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'depth' is not a number of tokens"), std::string::npos)
      << bad.error().message;
}

TEST(TuneJournal, ReplayBringsAGridToTheSameState) {
  for (std::size_t steps = 1; steps <= 6; ++steps) {
    GridSearch original(journal_knobs(), kJournalStart);
    Measurement start;
    const auto results = journal_run(original, steps, start);
    const auto journal = parse_journal(journal_text(results, start), "j.jsonl");
    ASSERT_TRUE(journal) << journal.error().message;
    GridSearch resumed(journal_knobs(), kJournalStart);
    ASSERT_TRUE(replay_journal(*journal, resumed).ok());
    EXPECT_EQ(resumed.incumbent(), original.incumbent()) << steps;
    EXPECT_EQ(resumed.remaining_at_most(), original.remaining_at_most()) << steps;
    const auto want = original.next();
    const auto got = resumed.next();
    ASSERT_EQ(got.has_value(), want.has_value()) << steps;
    if (want) {
      EXPECT_EQ(got->settings, want->settings);
    }
  }
}

TEST(TuneJournal, ReplayBringsANewSearchToTheSameState) {
  for (std::size_t steps = 1; steps <= 8; ++steps) {
    CoordinateSearch original(journal_knobs(), kJournalStart);
    Measurement start;
    const auto results = journal_run(original, steps, start);
    const auto journal = parse_journal(journal_text(results, start), "j.jsonl");
    ASSERT_TRUE(journal) << journal.error().message;
    CoordinateSearch resumed(journal_knobs(), kJournalStart);
    ASSERT_TRUE(replay_journal(*journal, resumed).ok());
    EXPECT_EQ(resumed.incumbent(), original.incumbent()) << steps;
    EXPECT_EQ(resumed.proposed(), original.proposed()) << steps;
    EXPECT_EQ(resumed.remaining_at_most(), original.remaining_at_most()) << steps;
    const auto want = original.next();
    const auto got = resumed.next();
    ASSERT_EQ(got.has_value(), want.has_value()) << steps;
    if (want) {
      EXPECT_EQ(got->index, want->index);
      EXPECT_EQ(got->setting, want->setting);
      EXPECT_EQ(got->value, want->value);
      EXPECT_EQ(got->settings, want->settings);
      EXPECT_EQ(got->incumbent, want->incumbent);
    }
  }
}

TEST(TuneJournal, ReplayRefusesAJournalOfOtherKnobs) {
  CoordinateSearch original(journal_knobs(), kJournalStart);
  Measurement start;
  const auto results = journal_run(original, 3, start);
  const auto journal = parse_journal(journal_text(results, start), "j.jsonl");
  ASSERT_TRUE(journal);
  std::vector<KnobPlan> fewer = journal_knobs();
  fewer.erase(fewer.begin());  // draft_n_max no longer searched
  CoordinateSearch other(fewer, kJournalStart);
  const Status status = replay_journal(*journal, other);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ExitCode::usage);
  EXPECT_NE(status.error().message.find("candidate 1 (draft_n_max 5)"), std::string::npos)
      << status.error().message;
  EXPECT_NE(status.error().message.find("(ubatch 1024)"), std::string::npos)
      << status.error().message;
}

}  // namespace
}  // namespace gb10tune::tune
