#include "gb10tune/server/rules.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::server {
namespace {

EffectiveSettings settings_for(std::vector<std::string> argv,
                               const platform::Environment& env = {}) {
  static const auto flags = ServerFlags::parse_help(
      testing::read_text(testing::fixture("llama-server/help-2026-08-commit-3f545be.txt")));
  SettingInputs in;
  argv.insert(argv.begin(), "llama-server");
  in.argv = std::move(argv);
  in.env = env;
  return resolve_settings(flags, in);
}

Severity severity_of(const std::vector<Finding>& findings, const std::string& id) {
  for (const auto& f : findings) {
    if (f.id == id) {
      return f.severity;
    }
  }
  ADD_FAILURE() << "no finding " << id;
  return Severity::ok;
}

const std::vector<std::string> kTuned = {"-ngl",
                                         "99",
                                         "-c",
                                         "589824",
                                         "-np",
                                         "3",
                                         "-fa",
                                         "on",
                                         "--spec-type",
                                         "draft-mtp",
                                         "--spec-draft-n-max",
                                         "4",
                                         "-kvu",
                                         "--cache-ram",
                                         "24576",
                                         "--jinja",
                                         "--host",
                                         "127.0.0.1",
                                         "--port",
                                         "8080"};

TEST(Rules, TheTunedConfigurationPassesEveryRule) {
  const auto findings = check_rules(settings_for(kTuned), {true, 64, true});
  ASSERT_EQ(findings.size(), 7u);
  for (const auto& f : findings) {
    EXPECT_EQ(f.severity, Severity::ok) << f.id << ": " << f.evidence;
    EXPECT_FALSE(f.fact.empty());
  }
}

TEST(Rules, EachBadSettingIsCaught) {
  const RuleInput mtp_model{true, 64, true};
  auto with = [&](std::vector<std::string> extra) {
    auto argv = kTuned;
    argv.insert(argv.end(), extra.begin(), extra.end());
    return check_rules(settings_for(argv), mtp_model);
  };
  EXPECT_EQ(severity_of(with({"-ngl", "20"}), "all-layers-on-gpu"), Severity::fail);
  EXPECT_EQ(severity_of(with({"-ngl", "auto"}), "all-layers-on-gpu"), Severity::warn);
  EXPECT_EQ(severity_of(with({"-ngl", "all"}), "all-layers-on-gpu"), Severity::ok);
  EXPECT_EQ(severity_of(with({"-fa", "off"}), "flash-attention-on"), Severity::fail);
  EXPECT_EQ(severity_of(with({"-fa", "auto"}), "flash-attention-on"), Severity::warn);
  EXPECT_EQ(severity_of(with({"--spec-type", "none"}), "mtp-when-model-has-head"), Severity::fail);
  EXPECT_EQ(severity_of(with({"--spec-draft-n-max", "3"}), "draft-n-max-4"), Severity::warn);
  EXPECT_EQ(severity_of(with({"-bs"}), "no-backend-sampling-with-mtp"), Severity::fail);
  EXPECT_EQ(severity_of(with({"-no-kvu"}), "kvu-with-cache-ram"), Severity::fail);
  EXPECT_EQ(severity_of(with({"--cache-ram", "0"}), "kvu-with-cache-ram"), Severity::warn);
  EXPECT_EQ(severity_of(with({"--load-mode", "mmap"}), "no-mmap-on-gb10"), Severity::warn);
  EXPECT_EQ(severity_of(with({"--mmap"}), "no-mmap-on-gb10"), Severity::warn);
}

TEST(Rules, DefaultsAndTheEnvironmentCount) {
  // -np unset: llama.cpp's auto mode uses a unified pool.
  EXPECT_EQ(severity_of(check_rules(settings_for({}), {}), "kvu-with-cache-ram"), Severity::ok);
  // A stray LLAMA_ARG_BACKEND_SAMPLING re-enables what the command line left out (K16).
  platform::Environment env;
  env.set("LLAMA_ARG_BACKEND_SAMPLING", "1");
  const auto findings = check_rules(settings_for(kTuned, env), {true, 64, false});
  const auto it = std::find_if(findings.begin(), findings.end(), [](const Finding& f) {
    return f.id == "no-backend-sampling-with-mtp";
  });
  ASSERT_NE(it, findings.end());
  EXPECT_EQ(it->severity, Severity::fail);
  EXPECT_NE(it->evidence.find("LLAMA_ARG_BACKEND_SAMPLING"), std::string::npos);
  // Without a model, fewer layers than 99 cannot be judged; the default draft depth is 3.
  EXPECT_EQ(
      severity_of(check_rules(settings_for({"--spec-type", "draft-mtp"}), {}), "draft-n-max-4"),
      Severity::warn);
  EXPECT_EQ(severity_of(check_rules(settings_for({"--spec-type", "draft-mtp"}), {false, 64}),
                        "mtp-when-model-has-head"),
            Severity::fail);
  EXPECT_EQ(
      severity_of(check_rules(settings_for({"-ngl", "64"}), {false, 64}), "all-layers-on-gpu"),
      Severity::fail);  // 64 blocks + the output layer need 65
}

const Finding& finding_of(const std::vector<Finding>& findings, const std::string& id) {
  for (const auto& f : findings) {
    if (f.id == id) {
      return f;
    }
  }
  throw std::runtime_error("no finding " + id);
}

// A tuned profile's measurements: flash attention off and no drafting were measured faster.
std::vector<MeasuredSetting> measured_off(const std::string& not_applied = "") {
  return {{"flash-attention-on", "-fa", "off",
           "flash_attn off: measured by gb10tune tune on 2026-12-04 (profile tuned-m-decode): on "
           "→ off 1.18× [1.05, 1.33] decode t/s at 95%, on this model and build",
           not_applied},
          {"mtp-when-model-has-head", "--spec-type", "",
           "mtp off: measured by gb10tune tune on 2026-12-04 (profile tuned-m-decode): auto → off "
           "11.60× [9.00, 15.00] decode t/s at 95%, on this model and build",
           not_applied}};
}

TEST(Rules, AMeasurementOnThisModelAndBuildOutranksTheRulesItContradicts) {
  const std::vector<std::string> tuned = {"-ngl", "99", "-np", "1", "-fa", "off"};
  RuleInput input{true, 64, false};
  // Without the measurement: flash attention off and no drafting on an MTP model both fail.
  EXPECT_EQ(severity_of(check_rules(settings_for(tuned), input), "flash-attention-on"),
            Severity::fail);
  EXPECT_EQ(severity_of(check_rules(settings_for(tuned), input), "mtp-when-model-has-head"),
            Severity::fail);
  input.measured = measured_off();
  const auto findings = check_rules(settings_for(tuned), input);
  const Finding& fa = finding_of(findings, "flash-attention-on");
  EXPECT_EQ(fa.severity, Severity::ok);
  EXPECT_TRUE(fa.fix.empty());
  EXPECT_EQ(fa.measured, input.measured[0].citation);
  EXPECT_TRUE(testing::contains(fa.evidence, "measured by gb10tune tune on 2026-12-04"))
      << fa.evidence;
  EXPECT_TRUE(testing::contains(fa.evidence, "the rule's advice: pass -fa on")) << fa.evidence;
  const Finding& mtp = finding_of(findings, "mtp-when-model-has-head");
  EXPECT_EQ(mtp.severity, Severity::ok);
  EXPECT_TRUE(testing::contains(mtp.evidence, "11.60×")) << mtp.evidence;
  // A rule the tune did not measure is untouched.
  EXPECT_TRUE(finding_of(findings, "draft-n-max-4").measured.empty());
}

TEST(Rules, AMeasurementOfAnotherValueOrAnotherModelLeavesTheRuleStanding) {
  RuleInput input{true, 64, false};
  input.measured = measured_off();
  // The server runs -fa auto, not the measured off: the warning stands, without a citation.
  const auto other_value =
      check_rules(settings_for({"-ngl", "99", "-fa", "auto", "--spec-type", "draft-mtp"}), input);
  EXPECT_EQ(severity_of(other_value, "flash-attention-on"), Severity::warn);
  EXPECT_TRUE(finding_of(other_value, "flash-attention-on").measured.empty());
  // Tuned for another model: the failure stands, saying so.
  input.measured = measured_off(
      "profile tuned-m-decode was tuned for the model /m/a.gguf, not "
      "/m/b.gguf: the rule stands");
  const auto elsewhere = check_rules(settings_for({"-ngl", "99", "-fa", "off"}), input);
  const Finding& fa = finding_of(elsewhere, "flash-attention-on");
  EXPECT_EQ(fa.severity, Severity::fail);
  EXPECT_TRUE(fa.measured.empty());
  EXPECT_TRUE(testing::contains(fa.evidence,
                                "a tune measured this setting, but profile "
                                "tuned-m-decode was tuned for the model /m/a.gguf"))
      << fa.evidence;
  EXPECT_EQ(fa.fix, "pass -fa on");
}

}  // namespace
}  // namespace gb10tune::server
