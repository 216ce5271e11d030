#include "gb10tune/launch/rule_verdict.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::launch {
namespace {

const server::ServerFlags& verdict_flags() {
  static const auto flags = server::ServerFlags::parse_help(
      testing::read_text(testing::fixture("llama-server/help-2026-08-commit-3f545be.txt")));
  return flags;
}

// The command of the tuned configuration (K9) for a 64-layer model with an MTP head, with
// launch's own pieces changed by `own` and `extra` after --.
ServerCommand verdict_command(const std::vector<std::string>& own,
                              const std::vector<std::string>& extra = {}) {
  ServerCommand command;
  command.pieces = {{{"-m", "/models/m.gguf"}, "model"},
                    {{"-ngl", "99"}, "all-layers-on-gpu"},
                    {{"-c", "589824"}, "context"},
                    {{"-np", "3"}, "slots"},
                    {{"-fa", "on"}, "flash-attention"},
                    {{"--spec-type", "draft-mtp"}, "mtp-when-model-has-head"},
                    {{"--spec-draft-n-max", "4"}, "draft-n-max-4"},
                    {{"-kvu", "--cache-ram", "24576"}, "kvu-with-cache-ram"}};
  if (!own.empty()) {
    command.pieces.push_back({own, "flash-attention"});
  }
  if (!extra.empty()) {
    command.pieces.push_back({extra, "extra-arguments"});
  }
  command.argv = {"/opt/llama.cpp/llama-server"};
  for (const ArgvPiece& piece : command.pieces) {
    command.argv.insert(command.argv.end(), piece.args.begin(), piece.args.end());
  }
  return command;
}

const server::RuleInput kVerdictModel{true, 64, true};

const RuleJudgement& judgement_of(const RuleVerdict& verdict, const std::string& id) {
  for (const RuleJudgement& rule : verdict.rules) {
    if (rule.finding.id == id) {
      return rule;
    }
  }
  throw std::runtime_error("no rule " + id);
}

TEST(RuleVerdict, TheTunedCommandPassesEveryRuleVerifyChecks) {
  const platform::Sysroot machine(testing::sysroot_fixture("gb10"));
  const auto verdict =
      judge_command(verdict_flags(), verdict_command({}), {}, machine, kVerdictModel, false);
  ASSERT_TRUE(verdict) << verdict.error().message;
  ASSERT_EQ(verdict->rules.size(), 7u);
  for (const RuleJudgement& rule : verdict->rules) {
    EXPECT_EQ(rule.action, RuleAction::ok) << rule.finding.id << ": " << rule.finding.evidence;
  }
  EXPECT_TRUE(verdict->warnings().empty());
}

// launch's own settings asked for it (the pieces it built): started with a warning naming the
// rule and its fact, and verify's ✘ becomes the same ⚠.
TEST(RuleVerdict, AFailureLaunchsOwnSettingsAskForIsChosenAndAWarning) {
  const platform::Sysroot machine(testing::sysroot_fixture("gb10"));
  const auto verdict = judge_command(verdict_flags(), verdict_command({"-fa", "off"}), {}, machine,
                                     kVerdictModel, false);
  ASSERT_TRUE(verdict) << verdict.error().message;
  const RuleJudgement& fa = judgement_of(*verdict, "flash-attention-on");
  EXPECT_EQ(fa.action, RuleAction::chosen);
  EXPECT_EQ(fa.finding.severity, server::Severity::warn);
  EXPECT_NE(fa.finding.evidence.find("asked for with launch's own settings"), std::string::npos)
      << fa.finding.evidence;
  EXPECT_EQ(verdict->ids(RuleAction::chosen), std::vector<std::string>{"flash-attention-on"});
  ASSERT_EQ(verdict->warnings().size(), 1u);
  EXPECT_NE(verdict->warnings()[0].find("flash attention on [K9]: -fa off"), std::string::npos)
      << verdict->warnings()[0];
}

// After --, in the environment or in a config.ini: refused naming the rule, its fact, the setting
// with its source and the fix; --force goes on and verify keeps the ✘, saying so.
TEST(RuleVerdict, AFailureFromOutsideLaunchsSettingsIsRefusedUnlessForced) {
  const platform::Sysroot machine(testing::sysroot_fixture("gb10"));
  const auto refused = judge_command(verdict_flags(), verdict_command({}, {"-bs"}), {}, machine,
                                     kVerdictModel, false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ExitCode::usage);
  const std::string& message = refused.error().message;
  EXPECT_NE(message.find("no --backend-sampling together with MTP [K6]"), std::string::npos)
      << message;
  EXPECT_NE(message.find("--backend-sampling true (from command line: argv["), std::string::npos)
      << message;
  EXPECT_NE(message.find("fix: remove --backend-sampling"), std::string::npos) << message;
  EXPECT_NE(message.find("--force starts it anyway"), std::string::npos) << message;

  const auto forced = judge_command(verdict_flags(), verdict_command({}, {"-bs"}), {}, machine,
                                    kVerdictModel, true);
  ASSERT_TRUE(forced) << forced.error().message;
  const RuleJudgement& k6 = judgement_of(*forced, "no-backend-sampling-with-mtp");
  EXPECT_EQ(k6.action, RuleAction::forced);
  EXPECT_EQ(k6.finding.severity, server::Severity::fail);
  EXPECT_NE(k6.finding.evidence.find("launched with --force"), std::string::npos);
  EXPECT_EQ(forced->ids(RuleAction::forced),
            std::vector<std::string>{"no-backend-sampling-with-mtp"});

  // The variable reaches the server unless launch took it out: judged like verify judges it.
  platform::Environment env;
  env.set("LLAMA_ARG_BACKEND_SAMPLING", "1");
  const auto from_env =
      judge_command(verdict_flags(), verdict_command({}), env, machine, kVerdictModel, false);
  ASSERT_FALSE(from_env);
  EXPECT_NE(from_env.error().message.find("LLAMA_ARG_BACKEND_SAMPLING"), std::string::npos);
}

TEST(RuleVerdict, ConfigIniEntriesAreJudgedNamingTheFileAndLine) {
  testing::TempDir root;
  std::filesystem::copy(testing::sysroot_fixture("gb10"), root.path(),
                        std::filesystem::copy_options::recursive);
  root.write("etc/llama.cpp/config.ini", "[*]\nflash-attn = off\nbackend-sampling = true\n");
  const auto verdict = judge_command(verdict_flags(), verdict_command({}), {},
                                     platform::Sysroot(root.path()), kVerdictModel, false);
  ASSERT_FALSE(verdict);
  EXPECT_NE(verdict.error().message.find("/etc/llama.cpp/config.ini:3"), std::string::npos)
      << verdict.error().message;
  // -fa on the command line wins over the file's flash-attn = off (K16).
  EXPECT_EQ(verdict.error().message.find("[K9]"), std::string::npos) << verdict.error().message;
}

TEST(RuleVerdict, WarningsStayWarningsForBoth) {
  const platform::Sysroot machine(testing::sysroot_fixture("gb10"));
  const auto verdict = judge_command(verdict_flags(), verdict_command({}, {"--load-mode", "mmap"}),
                                     {}, machine, kVerdictModel, false);
  ASSERT_TRUE(verdict) << verdict.error().message;
  const RuleJudgement& mmap = judgement_of(*verdict, "no-mmap-on-gb10");
  EXPECT_EQ(mmap.action, RuleAction::warned);
  EXPECT_EQ(mmap.finding.severity, server::Severity::warn);
  ASSERT_EQ(verdict->warnings().size(), 1u);
  EXPECT_NE(verdict->warnings()[0].find("[K19]"), std::string::npos);
}

TEST(RuleVerdict, VerifyTakesTheActionFromTheLaunchRecord) {
  LaunchRecord record;
  record.rules_chosen = {"flash-attention-on"};
  record.rules_forced = {"no-backend-sampling-with-mtp"};
  EXPECT_EQ(recorded_action(record, "flash-attention-on"), RuleAction::chosen);
  EXPECT_EQ(recorded_action(record, "no-backend-sampling-with-mtp"), RuleAction::forced);
  EXPECT_EQ(recorded_action(record, "all-layers-on-gpu"), RuleAction::ok);

  server::Finding failed;
  failed.severity = server::Severity::fail;
  server::Finding chosen = failed;
  note_launch_action(chosen, RuleAction::chosen);
  EXPECT_EQ(chosen.severity, server::Severity::warn);
  server::Finding forced = failed;
  note_launch_action(forced, RuleAction::forced);
  EXPECT_EQ(forced.severity, server::Severity::fail);
  EXPECT_NE(forced.evidence.find("--force"), std::string::npos);
  server::Finding untouched = failed;
  note_launch_action(untouched, RuleAction::ok);
  EXPECT_EQ(untouched.severity, server::Severity::fail);
  EXPECT_TRUE(untouched.evidence.empty());
  // A warning or a pass is what it is, whatever the record says.
  server::Finding warned;
  warned.severity = server::Severity::warn;
  note_launch_action(warned, RuleAction::forced);
  EXPECT_TRUE(warned.evidence.empty());
}

// The record keeps both lists; one of an older gb10tune without them still reads.
TEST(RuleVerdict, LaunchRecordKeepsTheRulesAndReadsWithoutThem) {
  LaunchRecord record;
  record.pid = 42;
  record.rules_chosen = {"kvu-with-cache-ram"};
  record.rules_forced = {"flash-attention-on"};
  auto doc = record_to_json(record);
  const auto back = record_from_json(doc, "launch.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->rules_chosen, record.rules_chosen);
  EXPECT_EQ(back->rules_forced, record.rules_forced);
  doc.erase("rules");
  const auto older = record_from_json(doc, "launch.json");
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_TRUE(older->rules_chosen.empty());
  doc["rules"] = {{"chosen", "flash-attention-on"}, {"forced", nlohmann::json::array()}};
  EXPECT_FALSE(record_from_json(doc, "launch.json"));
}

// A tuned profile's measurement of flash attention off: launch's own -fa off is neither chosen
// nor warned but passes citing it, and the record keeps the measurement for verify (a record
// of an older gb10tune has none).
TEST(RuleVerdict, AMeasurementPassesTheRuleItContradictsAndTheRecordKeepsIt) {
  const platform::Sysroot machine(testing::sysroot_fixture("gb10"));
  server::RuleInput measured = kVerdictModel;
  measured.measured = {{"flash-attention-on", "-fa", "off",
                        "flash_attn off: measured by gb10tune tune on 2026-12-04 (profile t): on → "
                        "off 1.18× [1.05, 1.33] decode t/s at 95%, on this model and build",
                        ""}};
  const auto verdict =
      judge_command(verdict_flags(), verdict_command({"-fa", "off"}), {}, machine, measured, false);
  ASSERT_TRUE(verdict) << verdict.error().message;
  const RuleJudgement& fa = judgement_of(*verdict, "flash-attention-on");
  EXPECT_EQ(fa.action, RuleAction::ok);
  EXPECT_EQ(fa.finding.severity, server::Severity::ok);
  EXPECT_EQ(fa.finding.measured, measured.measured[0].citation);
  EXPECT_TRUE(verdict->warnings().empty());
  ASSERT_EQ(verdict->measured.size(), 1u);

  LaunchRecord record;
  record.pid = 42;
  record.rules_measured = verdict->measured;
  auto doc = record_to_json(record);
  const auto back = record_from_json(doc, "launch.json");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->rules_measured.size(), 1u);
  EXPECT_EQ(back->rules_measured[0].citation, measured.measured[0].citation);
  EXPECT_EQ(back->rules_measured[0].option, "-fa");
  doc["rules"].erase("measured");
  const auto older = record_from_json(doc, "launch.json");
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_TRUE(older->rules_measured.empty());
  doc["rules"]["measured"] = {{{"rule", "flash-attention-on"}}};
  EXPECT_FALSE(record_from_json(doc, "launch.json"));
}

}  // namespace
}  // namespace gb10tune::launch
