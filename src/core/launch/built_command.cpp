#include "gb10tune/launch/built_command.hpp"

namespace gb10tune::launch {

Expected<BuiltCommand> build_launch_command(const LaunchSettings& settings,
                                            const CommandContext& c) {
  auto command = build_server_command(settings, *c.model, *c.flags, c.inputs);
  if (!command) {
    return command.error();
  }
  auto environment =
      prepare_child_environment(c.env, *c.flags, command->argv, c.sysroot, c.rules, c.inputs.force);
  if (!environment) {
    return environment.error();
  }
  auto verdict =
      judge_command(*c.flags, *command, environment->env, c.sysroot, c.rules, c.inputs.force);
  if (!verdict) {
    return verdict.error();
  }
  return BuiltCommand{std::move(*command), std::move(*environment), std::move(*verdict)};
}

std::vector<std::string> variables_to_unset(const BuiltCommand& built) {
  std::vector<std::string> names{"GGML_CUDA_ENABLE_UNIFIED_MEMORY"};
  for (const auto& change : built.environment.changes) {
    if (change.action == ChangeAction::removed && change.name != names.front()) {
      names.push_back(change.name);
    }
  }
  return names;
}

}  // namespace gb10tune::launch
