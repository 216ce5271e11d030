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

}  // namespace
}  // namespace gb10tune::tune
