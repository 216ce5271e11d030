// launch's verdict on the command it is about to start: the tuning rules verify checks
// (server::check_rules) over the exact argv, the child's environment and the config.ini files
// the server will read (K16), so that launch and verify judge one command the same way.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/launch/server_command.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/server/rules.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// What launch does about one rule's finding on its command.
enum class RuleAction {
  ok,       // the rule passes
  warned,   // a warning: launch prints it, verify shows ⚠
  chosen,   // a failure launch's own settings ask for (--flash-attn off, --no-kvu, …): started
            // with a warning, and verify shows ⚠ for this launch
  refused,  // a failure caused by an argument after --, a LLAMA_ARG_* variable or a config.ini
            // entry: nothing is started
  forced,   // such a failure passed with --force: verify shows ✘, saying so
};

// "ok", "warned", "chosen", "refused", "forced".
std::string_view rule_action_name(RuleAction action);

// One rule on the command: its finding as verify will show it for this launch, and what
// launch did about it.
struct RuleJudgement {
  server::Finding finding;
  RuleAction action = RuleAction::ok;
};

// Every rule's judgement, in server::check_rules order.
struct RuleVerdict {
  std::vector<RuleJudgement> rules;
  // A tuned profile's measurements the rules were judged with (server::RuleInput::measured):
  // the launch record keeps them for verify.
  std::vector<server::MeasuredSetting> measured;

  // The ids of the rules launch handled with `action` (what the launch record keeps).
  std::vector<std::string> ids(RuleAction action) const;
  // One line for each rule that does not pass: "flash attention on [K9]: -fa auto (…); fix: …".
  std::vector<std::string> warnings() const;
};

// Judges `command` as started with environment `env` on the machine under `root` (its
// config.ini files), with the rules and inputs verify will use on the running server. A failure
// the command has without its extra arguments, environment and config.ini is launch's own
// choice (chosen); any other failure is an Error (usage) naming the rule, its fact, the setting
// and where it comes from, and the fix, unless `force` (then forced).
Expected<RuleVerdict> judge_command(const server::ServerFlags& flags, const ServerCommand& command,
                                    const platform::Environment& env, const platform::Sysroot& root,
                                    const server::RuleInput& rules, bool force);

// Gives `finding` what its launch did about it: a failure launch's own settings chose becomes a
// warning saying so; one passed with --force stays a failure, saying so. Any other finding or
// action leaves it alone. launch uses it for its preview, verify with the launch record's
// recorded_action, so that both show one severity.
void note_launch_action(server::Finding& finding, RuleAction action);

// What `record` says launch did about rule `id`: chosen, forced, or ok when it names neither.
RuleAction recorded_action(const LaunchRecord& record, std::string_view id);

}  // namespace gb10tune::launch
