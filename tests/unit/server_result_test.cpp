#include "gb10tune/bench/server_result.hpp"

#include <gtest/gtest.h>

#include "support/server_results.hpp"

namespace gb10tune::bench {
namespace {

using nlohmann::json;
using testing::add_level;
using testing::make_result;

TEST(ServerResult, JsonRoundTripKeepsEveryRequestAndTheProvenance) {
  ServerBenchResult r = make_result({20, 21, 22}, {300}, {200, 210});
  add_level(r, 2, {11, 12, 10, 11});
  RooflineInputs bench_inputs;
  bench_inputs.bytes_per_token = 16'800'000'000;
  bench_inputs.bytes_source = "launch record";
  bench_inputs.bandwidth_bytes_per_second = 237e9;
  bench_inputs.bandwidth_source = "--bandwidth";
  r.roofline = compute_roofline(bench_inputs, 21, 3.2);
  r.provenance.props = {{"total_slots", 1}, {"build_info", "b7000"}};
  r.provenance.spec_type = "draft-mtp";
  r.provenance.draft_n_max = 4;
  r.provenance.spec_source = "/slots: 1 of 1 slot speculative";
  const json doc = result_to_json(r);
  EXPECT_EQ(doc["command"], "bench server");
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["levels"][0]["samples"].size(), 3u);
  EXPECT_EQ(doc["levels"][0]["metrics"]["decode_tps"]["median"], 21.0);
  EXPECT_EQ(doc["levels"][1]["total_decode_tps"]["median"], 22.0);  // rounds 23 and 21
  EXPECT_EQ(doc["levels"][0]["samples"][0]["timings"]["draft_n_accepted"], 200.0);
  EXPECT_TRUE(doc["levels"][0]["samples"][0]["timings"]["prompt_n"].is_number());

  const auto back = result_from_json(json::parse(doc.dump()), "r.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->provenance.settings, r.provenance.settings);
  EXPECT_EQ(back->provenance.launch_argv, r.provenance.launch_argv);
  EXPECT_EQ(back->provenance.speculative, std::optional<bool>(true));
  EXPECT_EQ(back->provenance.spec_type, "draft-mtp");
  EXPECT_EQ(back->provenance.draft_n_max, std::optional<std::uint32_t>(4));
  EXPECT_EQ(back->provenance.spec_source, "/slots: 1 of 1 slot speculative");
  // A result saved before these fields existed still loads, with them unknown.
  json old = json::parse(doc.dump());
  for (const char* key : {"spec_type", "spec_draft_n_max", "spec_source"}) {
    old["server"].erase(key);
  }
  const auto older = result_from_json(old, "old.json");
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_EQ(older->provenance.spec_type, "");
  EXPECT_FALSE(older->provenance.draft_n_max);
  EXPECT_EQ(back->provenance.props, r.provenance.props);
  ASSERT_EQ(back->levels.size(), 2u);
  EXPECT_EQ(back->levels[1].concurrency, 2);
  EXPECT_EQ(back->levels[1].round_totals, r.levels[1].round_totals);
  EXPECT_EQ(back->levels[0].samples[2].timings.predicted_per_second, 22);
  EXPECT_EQ(back->levels[0].samples[1].timings.draft_n_accepted, std::optional<double>(210));
  EXPECT_FALSE(back->levels[1].samples[0].timings.draft_n);
  EXPECT_EQ(back->options.concurrency, (std::vector<int>{1, 2}));
  EXPECT_NEAR(back->roofline.ceiling_tps, r.roofline.ceiling_tps, 1e-12);
  // The statistics are derived again from the same samples: the same document comes out.
  EXPECT_EQ(result_to_json(*back), doc);
}

TEST(ServerResult, BrokenDocumentsNameTheFileAndTheField) {
  const json good = result_to_json(make_result({20}, {300}));
  json missing = good;
  missing["levels"][0]["samples"][0]["timings"].erase("predicted_per_second");
  json other = good;
  other["command"] = "bench";
  json wrong = good;
  wrong["server"]["total_slots"] = "three";
  json empty = good;
  empty["levels"] = json::array();
  for (const auto& [doc, expected] : std::vector<std::pair<json, std::string>>{
           {missing, "sample 1: field 'predicted_per_second' is missing"},
           {other, "its command is 'bench'"},
           {wrong, "field 'total_slots' has the wrong type"},
           {empty, "'levels' is not a non-empty array"},
           {json::array(), "not a JSON object"}}) {
    const auto result = result_from_json(doc, "x.json");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ExitCode::usage);
    EXPECT_NE(result.error().message.find(expected), std::string::npos) << result.error().message;
    EXPECT_NE(result.error().message.find("x.json"), std::string::npos);
  }
}

TEST(ServerResult, TrimmedPropsDropTheChatTemplates) {
  const json props = {{"chat_template", "x"}, {"chat_template_tool_use", "y"}, {"total_slots", 3}};
  EXPECT_EQ(trimmed_props(props), (json{{"total_slots", 3}}));
}

TEST(ServerResult, NamesAndPaths) {
  const std::filesystem::path state = "/state/gb10tune";
  EXPECT_EQ(*saved_result_path("mtp-n4", state), state / "bench" / "mtp-n4.json");
  for (const char* bad : {"", ".hidden", "a/b", "two words", "x*"}) {
    const auto path = saved_result_path(bad, state);
    ASSERT_FALSE(path) << bad;
    EXPECT_EQ(path.error().code, ExitCode::usage);
  }
  EXPECT_FALSE(saved_result_path("ok", ""));
  EXPECT_EQ(*resolve_result("base", state), state / "bench" / "base.json");
  EXPECT_EQ(*resolve_result("./runs/a.json", state), std::filesystem::path("./runs/a.json"));
  EXPECT_EQ(*resolve_result("a.json", ""), std::filesystem::path("a.json"));
}

TEST(ServerResult, LevelSummaryAccountsForConcurrency) {
  ServerBenchResult r = make_result({20}, {300});
  add_level(r, 3, {7, 8, 9, 6, 7, 8});
  const LevelSummary s = summarize_level(r.levels[1]);
  EXPECT_EQ(s.concurrency, 3);
  EXPECT_DOUBLE_EQ(s.per_session_decode.stats.median, 7.5);
  EXPECT_EQ(s.total_decode.values, (std::vector<double>{24, 21}));
  EXPECT_DOUBLE_EQ(s.total_decode.stats.median, 22.5);
  EXPECT_DOUBLE_EQ(s.client_tokens_per_second, 6 * 256 / 30.0);  // client-timed, separate
}

}  // namespace
}  // namespace gb10tune::bench
