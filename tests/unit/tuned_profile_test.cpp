#include "gb10tune/tune/tuned_profile.hpp"

#include <gtest/gtest.h>

#include "gb10tune/launch/profile.hpp"
#include "support/test_context.hpp"

namespace gb10tune::tune {
namespace {

using nlohmann::json;

TunedFor tuned_for_qwen(const std::string& build = "b7000-3f545be",
                        const std::string& at = "2026-12-02T10:00:00Z") {
  return {.model_path = "/models/Qwen3.8-27B-Q4_K_M.gguf",
          .model_name = "Qwen3.8-27B-Q4_K_M.gguf",
          .build = build,
          .machine = "NVIDIA GB10",
          .goal = "decode",
          .workload = "built-in default workload",
          .tuned_at = at,
          .gain = 1.12,
          .gain_low = 1.07,
          .gain_high = 1.18,
          .confidence = 0.95};
}

const json kTunedSettings = {{"draft_n_max", 5},
                             {"ubatch", 1024},
                             {"slots", 1},
                             {"flash_attn", "on"},
                             {"model", "/models/Qwen3.8-27B-Q4_K_M.gguf"}};

TEST(TunedProfile, TheDocumentIsALaunchProfile) {
  const json doc = tuned_profile_document(kTunedSettings, tuned_for_qwen());
  const auto parsed = launch::parse_settings_document(doc.dump(2), "tuned.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->settings, kTunedSettings);
  EXPECT_EQ(parsed->tuned["gain"], 1.12);
  EXPECT_EQ(parsed->tuned["build"], "b7000-3f545be");
  EXPECT_EQ(parsed->description,
            "Tuned by gb10tune tune for Qwen3.8-27B-Q4_K_M.gguf (decode) on NVIDIA GB10, "
            "2026-12-02T10:00:00Z: 1.120× the starting settings [1.070, 1.180] at 95%, build "
            "b7000-3f545be, workload built-in default workload");
  // launch loads it by path like any profile of the user's.
  testing::TempDir dir;
  const auto path = dir.write("profiles/tuned.json", doc.dump(2));
  const auto loaded = launch::load_profile(path.string());
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->settings["draft_n_max"], 5);
}

TEST(TunedProfile, LaunchsParserTakesATunedObjectOnly) {
  const auto plain = launch::parse_settings_document(R"({"settings": {"slots": 2}})", "p.json");
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->tuned.is_null());
  const auto bad = launch::parse_settings_document(R"({"settings": {}, "tuned": "yes"})", "p.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unexpected top-level key 'tuned'"), std::string::npos)
      << bad.error().message;
  // A tuned profile's settings are checked like any other's.
  const auto wrong =
      launch::parse_settings_document(R"({"settings": {"ubatch": "big"}, "tuned": {}})", "p.json");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("ubatch"), std::string::npos);
}

TEST(TunedProfile, TheUsersProfileDirectory) {
  platform::Environment env;
  env.set("HOME", "/home/ann");
  EXPECT_EQ(user_profile_dir(env), "/home/ann/.config/gb10tune/profiles");
  env.set("XDG_CONFIG_HOME", "/cfg");
  EXPECT_EQ(user_profile_dir(env), "/cfg/gb10tune/profiles");
  EXPECT_EQ(user_profile_dir(platform::Environment()), "");
}

TEST(TunedProfile, NameFromTheModelAndTheGoal) {
  TunedFor tuned = tuned_for_qwen();
  EXPECT_EQ(tuned_profile_name(tuned), "tuned-qwen3.8-27b-q4_k_m-decode");
  tuned.goal = "throughput @4";
  EXPECT_EQ(tuned_profile_name(tuned), "tuned-qwen3.8-27b-q4_k_m-throughput-4");
  tuned.model_name = "My Model (v2).gguf";
  tuned.goal = "prefill";
  EXPECT_EQ(tuned_profile_name(tuned), "tuned-my-model-v2-prefill");
  tuned.model_name = "";  // the path's file name then
  EXPECT_EQ(tuned_profile_name(tuned), "tuned-qwen3.8-27b-q4_k_m-prefill");
}

TEST(TunedProfile, FindsTheModelsAndBuildsProfilesNewestFirst) {
  testing::TempDir dir;
  const auto write = [&](const std::string& name, const json& doc) {
    dir.write("profiles/" + name, doc.dump(2));
  };
  write("older.json", tuned_profile_document(
                          kTunedSettings, tuned_for_qwen("b7000-3f545be", "2026-11-30T09:00:00Z")));
  write("newer.json", tuned_profile_document(kTunedSettings, tuned_for_qwen()));
  write("other-build.json",
        tuned_profile_document(kTunedSettings, tuned_for_qwen("b7100-aaaaaaa")));
  TunedFor other_model = tuned_for_qwen();
  other_model.model_path = "/models/other.gguf";
  write("other-model.json", tuned_profile_document(kTunedSettings, other_model));
  write("mine.json", {{"settings", {{"slots", 2}}}});  // the user's own: not tuned
  json invalid = tuned_profile_document({{"ubatch", "big"}}, tuned_for_qwen());
  write("invalid.json", invalid);
  json incomplete = tuned_profile_document(kTunedSettings, tuned_for_qwen());
  incomplete["tuned"].erase("build");
  write("incomplete.json", incomplete);
  dir.write("profiles/broken.json", "{");
  dir.write("profiles/notes.txt", tuned_profile_document(kTunedSettings, tuned_for_qwen()).dump());

  const auto found = find_tuned_profiles(dir.path() / "profiles", "/models/Qwen3.8-27B-Q4_K_M.gguf",
                                         "b7000-3f545be");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].name, "newer");
  EXPECT_EQ(found[0].path, dir.path() / "profiles" / "newer.json");
  EXPECT_EQ(found[0].tuned.gain_high, 1.18);
  EXPECT_EQ(found[1].name, "older");
  EXPECT_EQ(
      find_tuned_profiles(dir.path() / "profiles", "/models/other.gguf", "b7000-3f545be").size(),
      1u);
  EXPECT_TRUE(find_tuned_profiles(dir.path() / "missing", "/m.gguf", "b").empty());
}

// A kept or not-kept candidate of a tune: `settings` against `incumbent`, with its paired ratio.
CandidateResult candidate(int index, const std::string& setting, json incumbent, json settings,
                          Outcome outcome, double ratio, double low, double high) {
  CandidateResult c;
  c.candidate.index = index;
  c.candidate.setting = setting;
  c.candidate.value = settings[setting];
  c.candidate.settings = std::move(settings);
  c.candidate.incumbent = std::move(incumbent);
  c.outcome = outcome;
  c.against.ratio = ratio;
  c.against.ratio_low = low;
  c.against.ratio_high = high;
  return c;
}

// A tune of depth 4, mtp auto, flash attention on: depth 3 kept, then 2 kept, mtp off kept,
// flash attention off not kept.
TuneResult tiny_qwen_tune() {
  TuneResult r;
  r.metric_label = "decode t/s";
  const json start = {{"draft_n_max", 4}, {"mtp", "auto"}, {"flash_attn", "on"}};
  json at = start;
  r.start.settings = start;
  const auto step = [&](const std::string& key, const json& value, Outcome outcome, double ratio,
                        double low, double high) {
    json next = at;
    next[key] = value;
    r.candidates.push_back(candidate(static_cast<int>(r.candidates.size()) + 1, key, at, next,
                                     outcome, ratio, low, high));
    if (outcome == Outcome::better) {
      at = next;
    }
  };
  step("draft_n_max", 5, Outcome::not_better, 0.9, 0.8, 1.01);
  step("draft_n_max", 3, Outcome::better, 1.2, 1.1, 1.3);
  step("draft_n_max", 2, Outcome::better, 1.1, 1.02, 1.19);
  step("mtp", "off", Outcome::better, 11.6, 9.0, 15.0);
  step("flash_attn", "off", Outcome::not_better, 1.01, 0.9, 1.1);
  r.winner.settings = at;
  return r;
}

TEST(TunedProfile, RecordsPerChangedKnobTheStepsThatWereKept) {
  const std::vector<TunedChange> changes = tuned_changes(tiny_qwen_tune());
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].setting, "draft_n_max");
  EXPECT_EQ(changes[0].from, 4);
  EXPECT_EQ(changes[0].to, 3);
  EXPECT_EQ(changes[0].ratio, 1.2);
  EXPECT_EQ(changes[0].metric, "decode t/s");
  EXPECT_EQ(changes[1].to, 2);
  EXPECT_EQ(changes[2].setting, "mtp");
  EXPECT_EQ(changes[2].to, "off");
  EXPECT_EQ(changes[2].ratio_low, 9.0);
  // A time (prefill): the ratio is turned into a speed-up, as the gain is.
  TuneResult prefill = tiny_qwen_tune();
  prefill.higher_is_better = false;
  EXPECT_DOUBLE_EQ(tuned_changes(prefill)[0].ratio_high, 1 / 1.1);
}

TEST(TunedProfile, TheChangesRoundTripAndAnOlderProfileStillLoads) {
  TunedFor tuned = tuned_for_qwen();
  tuned.server_build = "/opt/llama/bin/llama-server, 8123456 bytes, 2026-08-01T10:00:00Z";
  tuned.changes = tuned_changes(tiny_qwen_tune());
  const json doc = tuned_profile_document(kTunedSettings, tuned);
  ASSERT_TRUE(launch::parse_settings_document(doc.dump(), "p.json"));
  const auto back = tuned_for_from_json(doc["tuned"]);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->server_build, tuned.server_build);
  ASSERT_EQ(back->changes.size(), 3u);
  EXPECT_EQ(back->changes[2].to, "off");
  EXPECT_EQ(back->changes[2].ratio_high, 15.0);
  // A profile written before the changes were recorded: no server_build, no changes.
  json older = tuned_profile_document(kTunedSettings, tuned_for_qwen());
  older["tuned"].erase("server_build");
  older["tuned"].erase("changes");
  const auto old = tuned_for_from_json(older["tuned"]);
  ASSERT_TRUE(old);
  EXPECT_TRUE(old->changes.empty());
  EXPECT_TRUE(measured_settings(*old, "p", old->model_path, "").empty());
}

TEST(TunedProfile, TheRulesItsKnobsContradictAreCitedOnlyForItsModelAndBuild) {
  TunedFor tuned = tuned_for_qwen();
  tuned.tuned_at = "2026-12-04T09:00:00Z";
  tuned.server_build = "/opt/llama/bin/llama-server, 8123456 bytes, 2026-08-01T10:00:00Z";
  tuned.changes = tuned_changes(tiny_qwen_tune());
  const auto same =
      measured_settings(tuned, "tuned-q-decode", tuned.model_path, tuned.server_build);
  ASSERT_EQ(same.size(), 2u);  // draft depth and mtp have rules; none was measured for fa
  EXPECT_EQ(same[0].rule, "draft-n-max-4");
  EXPECT_EQ(same[0].option, "--spec-draft-n-max");
  EXPECT_EQ(same[0].value, "2");
  EXPECT_EQ(same[0].citation,
            "draft_n_max 2: measured by gb10tune tune on 2026-12-04 (profile tuned-q-decode): 4 → "
            "3 1.20× [1.10, 1.30], then 3 → 2 1.10× [1.02, 1.19] decode t/s at 95%, on this "
            "model and build");
  EXPECT_TRUE(same[0].not_applied.empty());
  EXPECT_EQ(same[1].rule, "mtp-when-model-has-head");
  EXPECT_EQ(same[1].option, "--spec-type");
  EXPECT_EQ(same[1].value, "");  // not drafting
  const auto other_model =
      measured_settings(tuned, "tuned-q-decode", "/models/other.gguf", tuned.server_build);
  EXPECT_TRUE(testing::contains(other_model[1].not_applied,
                                "was tuned for the model /models/Qwen3.8-27B-Q4_K_M.gguf, not "
                                "/models/other.gguf"))
      << other_model[1].not_applied;
  const auto other_build = measured_settings(tuned, "tuned-q-decode", tuned.model_path,
                                             "/opt/new/llama-server, 1 bytes");
  EXPECT_TRUE(
      testing::contains(other_build[0].not_applied, "tuned with another llama-server build"))
      << other_build[0].not_applied;
}

}  // namespace
}  // namespace gb10tune::tune
