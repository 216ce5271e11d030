#include "gb10tune/bench/run_settings.hpp"

#include <gtest/gtest.h>

namespace gb10tune::bench {
namespace {

using nlohmann::json;

json props(int slots, int n_max) {
  return {{"model_path", "/models/q.gguf"},
          {"build_info", "b7000-3f545be"},
          {"total_slots", slots},
          {"chat_template", "{{ long }}"},
          {"default_generation_settings",
           {{"n_ctx", 196608},
            {"params",
             {{"temperature", 0.8},
              {"samplers", {"top_k", "top_p"}},
              {"speculative", {{"n_max", n_max}, {"type", "draft-mtp"}}}}}}}};
}

TEST(RunSettings, PropsAreFlattened) {
  const RunSettings s = settings_from_props(props(3, 4));
  EXPECT_EQ(s.at("model"), "/models/q.gguf");
  EXPECT_EQ(s.at("build"), "b7000-3f545be");
  EXPECT_EQ(s.at("props:total_slots"), "3");
  EXPECT_EQ(s.at("props:n_ctx"), "196608");
  EXPECT_EQ(s.at("props:params.speculative.n_max"), "4");
  EXPECT_EQ(s.at("props:params.speculative.type"), "draft-mtp");
  EXPECT_EQ(s.at("props:params.samplers"), R"(["top_k","top_p"])");
  EXPECT_EQ(s.count("props:chat_template"), 0u);
  EXPECT_TRUE(settings_from_props(json::array()).empty());
}

TEST(RunSettings, ArgvFlagsValuesAndSwitches) {
  const RunSettings s = settings_from_argv(
      {"/opt/llama-server", "-m", "/models/q.gguf", "-ngl", "99", "-c", "589824", "--seed", "-1",
       "-kvu", "--spec-type", "draft-mtp", "--jinja", "--cache-ram=24576"});
  EXPECT_EQ(s.at("argv:-ngl"), "99");
  EXPECT_EQ(s.at("argv:-c"), "589824");
  EXPECT_EQ(s.at("argv:--seed"), "-1");  // a negative number is a value
  EXPECT_EQ(s.at("argv:-kvu"), "on");    // a switch followed by a flag
  EXPECT_EQ(s.at("argv:--spec-type"), "draft-mtp");
  EXPECT_EQ(s.at("argv:--jinja"), "on");  // a switch at the end
  EXPECT_EQ(s.at("argv:--cache-ram"), "24576");
  EXPECT_EQ(s.count("argv:-m"), 0u);  // the model is "model", once
  EXPECT_EQ(s.size(), 7u);
}

TEST(RunSettings, DifferencesPreferTheFlagsWhenBothRunsHaveThem) {
  RunSettings a = settings_from_props(props(3, 3));
  RunSettings b = settings_from_props(props(3, 4));
  // Without argv the /props fields count.
  auto diff = setting_differences(a, b);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].key, "props:params.speculative.n_max");
  EXPECT_EQ(diff[0].a, "3");
  EXPECT_EQ(diff[0].b, "4");
  // With argv on both sides the flags are the causes: one flag, one difference.
  for (auto& [key, value] : settings_from_argv({"s", "--spec-draft-n-max", "3"})) {
    a[key] = value;
  }
  for (auto& [key, value] : settings_from_argv({"s", "--spec-draft-n-max", "4", "-np", "3"})) {
    b[key] = value;
  }
  diff = setting_differences(a, b);
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_EQ(diff[0].key, "argv:--spec-draft-n-max");
  EXPECT_EQ(diff[1].key, "argv:-np");
  EXPECT_EQ(diff[1].a, "");  // unset in a
  // Model and build always count.
  b["build"] = "b7100";
  EXPECT_EQ(setting_differences(a, b).size(), 3u);
  EXPECT_TRUE(setting_differences(a, a).empty());
}

}  // namespace
}  // namespace gb10tune::bench
