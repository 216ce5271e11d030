// The server's environment: the caller's, without GGML_CUDA_ENABLE_UNIFIED_MEMORY (K2), and
// with every LLAMA_ARG_* variable or config.ini entry that would contradict the planned
// command line accounted for (K16).
#pragma once

#include <string>
#include <vector>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/server/rules.hpp"
#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// What happened to one outside setting.
enum class ChangeAction {
  removed,     // taken out of the child's environment
  overridden,  // the command line sets the same option, so it has no effect
  applies,     // left alone: it reaches the server and does not contradict the plan
};

// "removed", "overridden", "applies".
std::string_view change_action_name(ChangeAction action);

// One environment variable or config.ini entry and what launch did about it.
struct EnvironmentChange {
  std::string name;  // "GGML_CUDA_ENABLE_UNIFIED_MEMORY", "/etc/llama.cpp/config.ini:3"
  std::string value;
  ChangeAction action = ChangeAction::applies;
  std::string reason;  // one line
  std::string fact;    // "K2", "K16"
};

// The environment for the child and the account of it.
struct ChildEnvironment {
  platform::Environment env;
  std::vector<EnvironmentChange> changes;
  std::vector<std::string> warnings;  // unreadable config files, unknown LLAMA_ARG_* names
};

// Prepares the child's environment for `argv` (argv[0] the server): a LLAMA_ARG_* variable that
// contradicts the command line, sets a memory option or makes a tuning rule (`rules`) worse is
// removed. Config files are read under `root` for the user of `caller` (its XDG_CONFIG_HOME /
// HOME); launch cannot edit them, so an entry that sets a memory option the command leaves at
// its default is an Error (usage) naming the file and line unless `force`. What the entries do
// to the tuning rules is judged on the finished command by judge_command (rule_verdict.hpp).
Expected<ChildEnvironment> prepare_child_environment(const platform::Environment& caller,
                                                     const server::ServerFlags& flags,
                                                     const std::vector<std::string>& argv,
                                                     const platform::Sysroot& root,
                                                     const server::RuleInput& rules, bool force);

}  // namespace gb10tune::launch
