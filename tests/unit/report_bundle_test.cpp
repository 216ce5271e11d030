#include "gb10tune/report/report_bundle.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;
using testing::fixture;

json json_file(const std::filesystem::path& path) {
  return json::parse(testing::read_text(path));
}

TEST(ReportBundle, LoadsEveryPartOfTheCapturedCpuServerState) {
  const auto bundle = report::load_report_bundle(fixture("report/cpu-server"));
  ASSERT_TRUE(bundle) << bundle.error().message;
  EXPECT_TRUE(bundle->probe);
  EXPECT_FALSE(bundle->bench);  // no GPU on that machine: no bench.json
  ASSERT_TRUE(bundle->launch);
  ASSERT_TRUE(bundle->verify);
  ASSERT_TRUE(bundle->tune);
  ASSERT_EQ(bundle->runs.size(), 2u);
  EXPECT_EQ(bundle->runs[0].name, "depth2");
  EXPECT_EQ(bundle->runs[1].name, "depth4");
  EXPECT_TRUE(bundle->problems.empty());
  EXPECT_EQ(bundle->launch->doc, json_file(fixture("report/cpu-server/launch.json")));
  EXPECT_EQ(bundle->runs[1].doc, json_file(fixture("report/cpu-server/bench/depth4.json")));
  EXPECT_FALSE(bundle->launch->saved_at.empty());
}

TEST(ReportBundle, TuneJournalIsReadBackByTheTunesOwnReader) {
  const auto bundle = report::load_report_bundle(fixture("report/cpu-server"));
  ASSERT_TRUE(bundle && bundle->tune);
  const std::string journal = testing::read_text(fixture("report/cpu-server/tune-journal.jsonl"));
  std::size_t candidates = 0;
  for (std::size_t at = journal.find("\"type\":\"candidate\""); at != std::string::npos;
       at = journal.find("\"type\":\"candidate\"", at + 1)) {
    ++candidates;
  }
  ASSERT_GT(candidates, 0u);
  EXPECT_EQ(bundle->tune->doc["candidates"].size(), candidates);
  EXPECT_EQ(bundle->tune->doc["header"]["goal"], "decode");
  EXPECT_TRUE(bundle->tune->doc["start"]["median"].is_number());
}

TEST(ReportBundle, DamagedPartIsNamedAndTheOthersStillLoad) {
  testing::TempDir dir;
  dir.write("launch.json", "{\"pid\": 12");
  dir.write("probe.json", testing::read_text(fixture("report/h200/probe.json")));
  dir.write("bench/broken.json", "not json");
  const auto bundle = report::load_report_bundle(dir.path());
  ASSERT_TRUE(bundle);
  EXPECT_TRUE(bundle->probe);
  EXPECT_FALSE(bundle->launch);
  EXPECT_TRUE(bundle->runs.empty());
  ASSERT_EQ(bundle->problems.size(), 2u);
  EXPECT_TRUE(testing::contains(bundle->problems[0], "launch.json")) << bundle->problems[0];
  EXPECT_TRUE(testing::contains(bundle->problems[0], "run gb10tune launch again"));
  EXPECT_TRUE(testing::contains(bundle->problems[1], "broken.json")) << bundle->problems[1];
  EXPECT_TRUE(testing::contains(bundle->problems[1], "bench server --save"));
}

TEST(ReportBundle, DamagedJournalIsAProblem) {
  testing::TempDir dir;
  dir.write("tune-journal.jsonl", "{\"type\":\"start\"}\n{\"type\":\"header\"}\n");
  const auto bundle = report::load_report_bundle(dir.path());
  ASSERT_TRUE(bundle);
  EXPECT_FALSE(bundle->tune);
  ASSERT_EQ(bundle->problems.size(), 1u);
  EXPECT_TRUE(testing::contains(bundle->problems[0], "tune-journal.jsonl")) << bundle->problems[0];
}

TEST(ReportBundle, MissingDirectoryIsAUsageErrorNamingIt) {
  testing::TempDir dir;
  const auto bundle = report::load_report_bundle(dir.path() / "nowhere");
  ASSERT_FALSE(bundle);
  EXPECT_EQ(bundle.error().code, ExitCode::usage);
  EXPECT_TRUE(testing::contains(bundle.error().message, (dir.path() / "nowhere").string()));
  EXPECT_TRUE(testing::contains(bundle.error().message, "gb10tune probe"));
}

TEST(ReportBundle, JsonHoldsEveryPartAsSavedAndNullForTheAbsent) {
  const auto bundle = report::load_report_bundle(fixture("report/h200"));
  ASSERT_TRUE(bundle);
  const json doc = report::bundle_to_json(*bundle);
  EXPECT_EQ(doc["command"], "report");
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["bench"], json_file(fixture("report/h200/bench.json")));
  EXPECT_EQ(doc["probe"], json_file(fixture("report/h200/probe.json")));
  EXPECT_TRUE(doc["launch"].is_null());
  EXPECT_TRUE(doc["verify"].is_null());
  EXPECT_TRUE(doc["tune"].is_null());
  EXPECT_EQ(doc["runs"], json::object());
  EXPECT_EQ(doc["problems"], json::array());
}

}  // namespace
}  // namespace gb10tune
