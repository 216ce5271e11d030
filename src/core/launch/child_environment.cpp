#include "gb10tune/launch/child_environment.hpp"

#include <fmt/format.h>

#include <map>

#include "gb10tune/launch/memory_options.hpp"
#include "gb10tune/server/settings.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::launch {

namespace {

constexpr std::string_view kUnifiedMemory = "GGML_CUDA_ENABLE_UNIFIED_MEMORY";

// Severity of each rule for a set of settings.
std::map<std::string, server::Severity> severities(const server::EffectiveSettings& settings,
                                                   const server::RuleInput& rules) {
  std::map<std::string, server::Severity> out;
  for (const auto& f : server::check_rules(settings, rules)) {
    out[f.id] = f.severity;
  }
  return out;
}

// The rules that are worse under `worse` than under `better`, with the finding's evidence.
std::vector<server::Finding> made_worse(const server::EffectiveSettings& better,
                                        const server::EffectiveSettings& worse,
                                        const server::RuleInput& rules) {
  const auto before = severities(better, rules);
  std::vector<server::Finding> out;
  for (const auto& f : server::check_rules(worse, rules)) {
    if (static_cast<int>(f.severity) > static_cast<int>(before.at(f.id))) {
      out.push_back(f);
    }
  }
  return out;
}

// The command line's value of `key`, nullptr when the command line does not set it.
const server::SettingValue* from_command_line(const server::EffectiveSettings& s,
                                              const std::string& key) {
  const auto* v = s.get(key);
  return v != nullptr && v->source == server::SettingSource::command_line ? v : nullptr;
}

}  // namespace

std::string_view change_action_name(ChangeAction action) {
  switch (action) {
    case ChangeAction::removed:
      return "removed";
    case ChangeAction::overridden:
      return "overridden";
    case ChangeAction::applies:
      return "applies";
  }
  return "?";
}

Expected<ChildEnvironment> prepare_child_environment(const platform::Environment& caller,
                                                     const server::ServerFlags& flags,
                                                     const std::vector<std::string>& argv,
                                                     const platform::Sysroot& root,
                                                     const server::RuleInput& rules, bool force) {
  ChildEnvironment out;
  out.env = caller;
  if (const auto value = caller.get(std::string(kUnifiedMemory))) {
    out.env.unset(std::string(kUnifiedMemory));
    out.changes.push_back({std::string(kUnifiedMemory), *value, ChangeAction::removed,
                           fmt::format("llama.cpp only tests whether it exists (='{}' turns "
                                       "managed memory on too): decode 15.1 → 17.5 t/s without it",
                                       *value),
                           "K2"});
  }

  // The command line alone: what launch planned.
  server::SettingInputs planned;
  planned.argv = argv;
  const auto planned_settings = server::resolve_settings(flags, planned);

  // LLAMA_ARG_* variables: removed when they contradict the command line or make a rule
  // worse; otherwise they reach the server and are shown.
  for (const auto& [name, value] : caller.vars()) {
    if (!starts_with(name, "LLAMA_ARG_")) {
      continue;
    }
    const auto* spec = flags.find_by_env(name);
    if (spec == nullptr && starts_with(name, "LLAMA_ARG_NO_")) {
      spec = flags.find_by_env("LLAMA_ARG_" + name.substr(13));
    }
    if (spec == nullptr) {
      out.warnings.push_back(
          fmt::format("{} is not read by this llama-server build; it has no "
                      "effect",
                      name));
      continue;
    }
    const auto flag = spec->names.back();
    if (const auto* cli = from_command_line(planned_settings, spec->key())) {
      // llama.cpp lets the command line win, but a contradicting variable is confusing in
      // every later look at the process (verify, /proc/<pid>/environ): take it out.
      out.env.unset(name);
      out.changes.push_back({name, value, ChangeAction::removed,
                             fmt::format("contradicts {} {} on the command line", flag, cli->value),
                             "K16"});
      continue;
    }
    if (const MemoryOption* memory = find_memory_option(spec->key())) {
      // The plan sized llama.cpp's default for it: the variable would make the server hold
      // something else.
      out.env.unset(name);
      out.changes.push_back(
          {name, value, ChangeAction::removed,
           fmt::format("would set {}: it {}{}", flag, memory_option_reason(*memory),
                       memory->own_option.empty() ? "" : " (give it there)"),
           "K16"});
      continue;
    }
    server::SettingInputs with_var;
    with_var.argv = argv;
    with_var.env.set(name, value);
    const auto worse =
        made_worse(planned_settings, server::resolve_settings(flags, with_var), rules);
    if (!worse.empty()) {
      out.env.unset(name);
      out.changes.push_back(
          {name, value, ChangeAction::removed,
           fmt::format("would set {}: {} ({})", flag, worse.front().summary, worse.front().fact),
           "K16"});
    } else {
      out.changes.push_back({name, value, ChangeAction::applies,
                             fmt::format("sets {} (not on the planned command line)", flag),
                             "K16"});
    }
  }

  // config.ini entries: launch cannot edit the files; the command line overrides what it
  // sets, and an entry that changes what the memory plan sizes is refused.
  auto inputs = server::gather_inputs(root, out.env, argv);
  out.warnings.insert(out.warnings.end(), inputs.warnings.begin(), inputs.warnings.end());
  inputs.env = platform::Environment{};  // the variables were judged above
  const auto with_config = server::resolve_settings(flags, inputs);
  for (const auto& [key, value] : with_config.history) {
    if (value.source != server::SettingSource::system_config &&
        value.source != server::SettingSource::user_config) {
      continue;
    }
    const auto* cli = from_command_line(planned_settings, key);
    if (const MemoryOption* memory = cli ? nullptr : find_memory_option(key)) {
      auto message = fmt::format(
          "a llama.cpp config.ini entry breaks the memory plan: {} = {} ({}) {}; remove that "
          "entry{}",
          key, value.value, value.origin, memory_option_reason(*memory),
          memory->own_option.empty() ? "" : fmt::format(" and use {}", memory->own_option));
      if (!force) {
        return Error{std::move(message), ExitCode::usage};
      }
      out.warnings.push_back(message + " (going on: --force)");
    }
    out.changes.push_back({value.origin, fmt::format("{} = {}", key, value.value),
                           cli ? ChangeAction::overridden : ChangeAction::applies,
                           cli ? fmt::format("the command line sets {} {}", key, cli->value)
                               : fmt::format("sets --{} (not on the planned command line)", key),
                           "K16"});
  }
  for (const auto& warning : with_config.warnings) {
    if (warning.find("config.ini") != std::string::npos) {
      out.warnings.push_back(warning);
    }
  }
  // What the entries do to the tuning rules is judge_command's, on the finished command.
  return out;
}

}  // namespace gb10tune::launch
