// The command a launch runs, the clean environment it runs in (K2, K16), and the tuning rules'
// verdict on both (what verify will say of the started server): built once from the settings,
// and again after the fit lowered them.
#pragma once

#include <string>
#include <vector>

#include "gb10tune/launch/child_environment.hpp"
#include "gb10tune/launch/profile.hpp"
#include "gb10tune/launch/rule_verdict.hpp"
#include "gb10tune/launch/server_command.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/server/rules.hpp"
#include "gb10tune/server/server_flags.hpp"

namespace gb10tune::launch {

// A command and what goes with it.
struct BuiltCommand {
  ServerCommand command;
  ChildEnvironment environment;
  RuleVerdict rules;
};

// What building a command needs besides the settings.
struct CommandContext {
  const model::ModelFacts* model = nullptr;
  const server::ServerFlags* flags = nullptr;
  CommandInputs inputs;
  server::RuleInput rules;
  platform::Environment env;  // the caller's, cleaned for the child
  platform::Sysroot sysroot;  // config.ini files are read under it
};

// Builds the command for `settings`, its environment and the rules' verdict; the Errors of
// build_server_command, prepare_child_environment and judge_command (refusals unless
// inputs.force).
Expected<BuiltCommand> build_launch_command(const LaunchSettings& settings,
                                            const CommandContext& context);

// What a supervisor running the command elsewhere must unset: the trap variable (K2) and every
// variable the environment lost, once each.
std::vector<std::string> variables_to_unset(const BuiltCommand& built);

}  // namespace gb10tune::launch
