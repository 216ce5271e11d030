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
  // 3f545be's request default, not the server's setting.
  json current = props(3, 4);
  current["default_generation_settings"]["params"]["speculative.types"] = "none";
  EXPECT_EQ(settings_from_props(current).count("props:params.speculative.types"), 0u);
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

TEST(RunSettings, SlotsSayWhatTheServerRunsTheRecordSaysHow) {
  const std::vector<std::string> mtp_argv = {
      "s", "-np", "3", "--spec-type", "draft-mtp", "--spec-draft-n-max", "4"};
  const std::vector<std::string> plain_argv = {"s", "-np", "3"};
  SpeculativeSetting spec = resolve_speculative(3, 3, &mtp_argv);
  EXPECT_EQ(spec.on, true);
  EXPECT_EQ(spec.type, "draft-mtp");
  EXPECT_EQ(spec.n_max, 4u);
  EXPECT_EQ(spec.source,
            "/slots: 3 of 3 slots speculative; launch record: --spec-type draft-mtp "
            "--spec-draft-n-max 4");
  // The default depth is 3.
  const std::vector<std::string> default_depth = {"s", "--spec-type", "draft-mtp"};
  EXPECT_EQ(resolve_speculative(1, 1, &default_depth).n_max, 3u);
  // /slots wins over the record when they disagree, and the source says both.
  spec = resolve_speculative(3, 0, &mtp_argv);
  EXPECT_EQ(spec.on, false);
  EXPECT_EQ(spec.type, "none");
  EXPECT_FALSE(spec.n_max);
  EXPECT_NE(spec.source.find("(disagrees with /slots, which shows what the server runs)"),
            std::string::npos)
      << spec.source;
  // Without a record only /slots speaks; without either nothing is known.
  EXPECT_EQ(resolve_speculative(2, 2, nullptr).type, "on (type not reported)");
  EXPECT_EQ(resolve_speculative(0, 0, &plain_argv).type, "none");
  EXPECT_FALSE(resolve_speculative(0, 0, nullptr).on);
  EXPECT_TRUE(settings_from_speculative(resolve_speculative(0, 0, nullptr)).empty());
}

TEST(RunSettings, SpecTypeCountsOnceAndTheDepthFollowsIt) {
  const std::vector<std::string> mtp_argv = {
      "s", "-np", "3", "--spec-type", "draft-mtp", "--spec-draft-n-max", "4"};
  const std::vector<std::string> plain_argv = {"s", "-np", "3"};
  RunSettings mtp = settings_from_argv(mtp_argv);
  RunSettings plain = settings_from_argv(plain_argv);
  for (auto& [key, value] : settings_from_speculative(resolve_speculative(3, 3, &mtp_argv))) {
    mtp[key] = value;
  }
  for (auto& [key, value] : settings_from_speculative(resolve_speculative(3, 0, &plain_argv))) {
    plain[key] = value;
  }
  auto diff = setting_differences(plain, mtp);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].key, "spec-type");
  EXPECT_EQ(diff[0].a, "none");
  EXPECT_EQ(diff[0].b, "draft-mtp");
  // Two MTP runs of different depth: the depth is the one difference.
  RunSettings deeper = mtp;
  deeper["argv:--spec-draft-n-max"] = "7";
  deeper["spec-draft-n-max"] = "7";
  diff = setting_differences(mtp, deeper);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].key, "spec-draft-n-max");
  // Without argv (servers started by hand) spec-type still counts.
  const RunSettings a = {{"spec-type", "none"}, {"props:params.speculative.types", "none"}};
  const RunSettings b = {{"spec-type", "on (type not reported)"},
                         {"props:params.speculative.types", "none"}};
  diff = setting_differences(a, b);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].key, "spec-type");
}

// The RPC topology is a setting: one worker more (or none) is a difference, counted once
// even when both runs have their argv; a run whose argv is unknown has no "rpc" key.
TEST(RunSettings, RpcTopologyIsOneSetting) {
  const std::vector<std::string> two = {"s", "-np", "1", "--rpc", "10.0.0.2:50052,10.0.0.3:50052"};
  const std::vector<std::string> one = {"s", "-np", "1", "--rpc=10.0.0.2:50052"};
  const std::vector<std::string> none = {"s", "-np", "1"};
  EXPECT_EQ(rpc_workers_from_argv(two), "10.0.0.2:50052,10.0.0.3:50052");
  EXPECT_EQ(rpc_workers_from_argv(one), "10.0.0.2:50052");
  EXPECT_EQ(rpc_workers_from_argv(none), "");
  const auto settings = [](const std::vector<std::string>& argv) {
    RunSettings out = settings_from_argv(argv);
    for (auto& [key, value] : settings_from_rpc(rpc_workers_from_argv(argv))) {
      out[key] = value;
    }
    return out;
  };
  auto diff = setting_differences(settings(two), settings(one));
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].key, "rpc");
  EXPECT_EQ(diff[0].a, "10.0.0.2:50052,10.0.0.3:50052");
  diff = setting_differences(settings(one), settings(none));
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].key, "rpc");
  EXPECT_EQ(diff[0].b, "");
  EXPECT_TRUE(setting_differences(settings(none), settings(none)).empty());
  // Without argv on either side (servers started elsewhere): props only, rpc unknown.
  RunSettings hand = {{"props:total_slots", "1"}};
  RunSettings launched = settings(one);
  launched["props:total_slots"] = "1";
  diff = setting_differences(hand, launched);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].key, "rpc");
}

}  // namespace
}  // namespace gb10tune::bench
