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

}  // namespace
}  // namespace gb10tune::server
