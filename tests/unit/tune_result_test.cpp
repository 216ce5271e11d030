#include "gb10tune/tune/tune_result.hpp"

#include <gtest/gtest.h>

namespace gb10tune::tune {
namespace {

using nlohmann::json;

TEST(TuneResult, MeasurementSummarizesTheReportedValues) {
  // A request the server did not report (0) keeps its place but not its value.
  const Measurement m =
      make_measurement({{"ubatch", 512}}, {"a/1", "a/2", "b/1", "b/2", "c/1"}, {20, 0, 30, 25, 10});
  EXPECT_EQ(m.settings, (json{{"ubatch", 512}}));
  EXPECT_EQ(m.requests.size(), 5u);
  EXPECT_EQ(m.values.size(), 5u);
  EXPECT_EQ(m.stats.count, 4);
  EXPECT_EQ(m.stats.median, 22.5);
  EXPECT_EQ(m.interval.low, 10);  // 4 values: [min, max] at 87.5%
  EXPECT_EQ(m.interval.high, 30);
  EXPECT_DOUBLE_EQ(m.interval.confidence, 0.875);
  const Measurement none = make_measurement(json::object(), {}, {});
  EXPECT_EQ(none.stats.count, 0);
}

TEST(TuneResult, MeasurementJsonRoundTrip) {
  const Measurement m = make_measurement({{"draft_n_max", 5}}, {"a", "b", "c"}, {21.5, 0, 23.25});
  const json doc = measurement_to_json(m);
  EXPECT_EQ(doc["median"], 22.375);
  EXPECT_EQ(doc["count"], 2);
  Measurement back;
  std::string error;
  ASSERT_TRUE(measurement_from_json(doc, back, error)) << error;
  EXPECT_EQ(measurement_to_json(back), doc);
  json uneven = doc;
  uneven["values"].push_back(3);
  EXPECT_FALSE(measurement_from_json(uneven, back, error));
  EXPECT_NE(error.find("3 requests but 4 values"), std::string::npos) << error;
  json missing = doc;
  missing.erase("requests");
  EXPECT_FALSE(measurement_from_json(missing, back, error));
  EXPECT_NE(error.find("requests"), std::string::npos) << error;
}

TEST(TuneResult, CandidateJsonRoundTripAndBadFields) {
  CandidateResult r;
  r.candidate.index = 3;
  r.candidate.setting = "ubatch";
  r.candidate.value = 1024;
  r.candidate.incumbent = {{"ubatch", 512}};
  r.candidate.settings = {{"ubatch", 1024}};
  r.mode = ApplyMode::restart;
  r.outcome = Outcome::does_not_fit;
  r.why = "needs 2.1 GiB more than MemAvailable minus the reserve";
  r.cost = {.restart_s = 0, .warmup_s = 0, .samples_s = 0, .samples = 0};
  const json doc = candidate_result_to_json(r);
  EXPECT_EQ(doc["outcome"], "does not fit");
  EXPECT_EQ(doc["mode"], "restart");
  CandidateResult back;
  std::string error;
  ASSERT_TRUE(candidate_result_from_json(doc, back, error)) << error;
  EXPECT_EQ(candidate_result_to_json(back), doc);
  EXPECT_EQ(back.outcome, Outcome::does_not_fit);
  for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
           {"outcome", "great"}, {"mode", "later"}, {"index", "three"}}) {
    json bad = doc;
    bad[field] = value;
    EXPECT_FALSE(candidate_result_from_json(bad, back, error)) << field;
    EXPECT_NE(error.find(field), std::string::npos) << error;
  }
  json bad_cost = doc;
  bad_cost["cost"].erase("samples");
  EXPECT_FALSE(candidate_result_from_json(bad_cost, back, error));
  EXPECT_NE(error.find("in 'cost'"), std::string::npos) << error;
}

TEST(TuneResult, StopReasonNames) {
  EXPECT_EQ(to_string(StopReason::done), "done");
  EXPECT_EQ(to_string(StopReason::budget), "budget");
  EXPECT_EQ(to_string(StopReason::interrupted), "interrupted");
  EXPECT_EQ(to_string(StopReason::memory_floor), "memory floor");
  EXPECT_EQ(to_string(StopReason::failed), "failed");
  EXPECT_EQ(to_string(ApplyMode::per_request), "per request");
}

}  // namespace
}  // namespace gb10tune::tune
