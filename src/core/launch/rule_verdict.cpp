#include "gb10tune/launch/rule_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/server/settings.hpp"

namespace gb10tune::launch {

namespace {

// The command without its extra arguments: what launch's own settings ask for.
std::vector<std::string> own_argv(const ServerCommand& command) {
  std::vector<std::string> argv{command.argv.front()};
  for (const ArgvPiece& piece : command.pieces) {
    if (piece.rule != "extra-arguments") {
      argv.insert(argv.end(), piece.args.begin(), piece.args.end());
    }
  }
  return argv;
}

// "flash attention on [K9]: -fa off (from command line: argv[8] -fa); fix: pass -fa on".
std::string describe(const server::Finding& finding) {
  return fmt::format("{} [{}]: {}{}", finding.summary, finding.fact, finding.evidence,
                     finding.fix.empty() ? "" : "; fix: " + finding.fix);
}

bool contains(const std::vector<std::string>& ids, std::string_view id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

std::string_view rule_action_name(RuleAction action) {
  switch (action) {
    case RuleAction::ok:
      return "ok";
    case RuleAction::warned:
      return "warned";
    case RuleAction::chosen:
      return "chosen";
    case RuleAction::refused:
      return "refused";
    case RuleAction::forced:
      return "forced";
  }
  return "?";
}

std::vector<std::string> RuleVerdict::ids(RuleAction action) const {
  std::vector<std::string> out;
  for (const RuleJudgement& rule : rules) {
    if (rule.action == action) {
      out.push_back(rule.finding.id);
    }
  }
  return out;
}

std::vector<std::string> RuleVerdict::warnings() const {
  std::vector<std::string> out;
  for (const RuleJudgement& rule : rules) {
    if (rule.action != RuleAction::ok) {
      out.push_back(describe(rule.finding));
    }
  }
  return out;
}

Expected<RuleVerdict> judge_command(const server::ServerFlags& flags, const ServerCommand& command,
                                    const platform::Environment& env, const platform::Sysroot& root,
                                    const server::RuleInput& rules, bool force) {
  server::SettingInputs own;
  own.argv = own_argv(command);
  const auto chosen = server::check_rules(server::resolve_settings(flags, own), rules);
  // What the server will run with, resolved as verify resolves it from the running process.
  const auto findings = server::check_rules(
      server::resolve_settings(flags, server::gather_inputs(root, env, command.argv)), rules);

  RuleVerdict verdict;
  verdict.measured = rules.measured;
  std::vector<std::string> refusals;
  for (const server::Finding& finding : findings) {
    RuleJudgement rule{finding, RuleAction::ok};
    if (finding.severity == server::Severity::warn) {
      rule.action = RuleAction::warned;
    } else if (finding.severity == server::Severity::fail) {
      const auto asked = std::find_if(chosen.begin(), chosen.end(),
                                      [&](const server::Finding& f) { return f.id == finding.id; });
      if (asked != chosen.end() && asked->severity == server::Severity::fail) {
        rule.action = RuleAction::chosen;
      } else {
        rule.action = force ? RuleAction::forced : RuleAction::refused;
        refusals.push_back(describe(finding));
      }
    }
    note_launch_action(rule.finding, rule.action);
    verdict.rules.push_back(std::move(rule));
  }
  if (!refusals.empty() && !force) {
    return Error{fmt::format("the command breaks a tuning rule that verify checks: {}. launch's "
                             "own settings pass it; what breaks it is given after --, in a "
                             "LLAMA_ARG_* variable or in a config.ini (named above): remove it. "
                             "Nothing was started (--force starts it anyway, and verify will "
                             "mark it ✘)",
                             fmt::join(refusals, "; and ")),
                 ExitCode::usage};
  }
  return verdict;
}

void note_launch_action(server::Finding& finding, RuleAction action) {
  if (finding.severity != server::Severity::fail) {
    return;
  }
  if (action == RuleAction::chosen) {
    finding.severity = server::Severity::warn;
    finding.evidence += "; asked for with launch's own settings, which launch warns about";
  } else if (action == RuleAction::forced) {
    finding.evidence += "; launched with --force past launch's refusal";
  }
}

RuleAction recorded_action(const LaunchRecord& record, std::string_view id) {
  if (contains(record.rules_chosen, id)) {
    return RuleAction::chosen;
  }
  return contains(record.rules_forced, id) ? RuleAction::forced : RuleAction::ok;
}

}  // namespace gb10tune::launch
