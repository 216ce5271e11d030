#include "gb10tune/server/settings.hpp"

#include <fmt/format.h>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::server {

namespace {

bool is_truthy(std::string_view v) {
  return v == "on" || v == "enabled" || v == "true" || v == "1";
}
bool is_falsey(std::string_view v) {
  return v == "off" || v == "disabled" || v == "false" || v == "0";
}

std::string normalize_long(std::string_view name) {
  std::string out(name);
  if (starts_with(out, "--")) {
    for (auto& c : out) {
      c = c == '_' ? '-' : c;
    }
  }
  return out;
}

// Collects the assignments of one place in order; the last one of a key wins.
class Applier {
 public:
  explicit Applier(EffectiveSettings& out) : m_out(out) {}

  void set(const FlagSpec& spec, std::string value, SettingSource source, std::string origin) {
    SettingValue setting{std::move(value), source, std::move(origin)};
    m_out.history.emplace_back(spec.key(), setting);
    m_out.values[spec.key()] = std::move(setting);
  }
  void warn(std::string message) { m_out.warnings.push_back(std::move(message)); }

 private:
  EffectiveSettings& m_out;
};

// The value a switch gets from `text` in a config file or the environment, as llama.cpp
// applies it; nullopt when it is not applied (a plain switch with a false value in the
// environment).
std::optional<std::string> switch_value(const FlagSpec& spec, std::string_view text,
                                        bool negative_key, bool from_env, Applier& applier,
                                        const std::string& origin) {
  if (spec.negative_names.empty()) {
    if (from_env) {
      if (is_truthy(text)) {
        return "true";
      }
      return std::nullopt;
    }
    if (is_falsey(text)) {
      applier.warn(
          fmt::format("{}: llama.cpp turns switch --{} on whatever its value ('{}'); "
                      "remove the line to leave it off",
                      origin, spec.key(), text));
    }
    return "true";
  }
  bool on = false;
  if (is_truthy(text)) {
    on = true;
  } else if (!is_falsey(text)) {
    applier.warn(
        fmt::format("{}: '{}' is not a boolean for --{} (llama.cpp accepts on/off, "
                    "true/false, 1/0, enabled/disabled)",
                    origin, text, spec.key()));
    return std::nullopt;
  }
  return (on != negative_key) ? "true" : "false";
}

// One config.ini file: the keys of its global section [*] and of its default section (keys
// before any section header, or [default]) are applied, global first, as llama.cpp does.
void apply_config(const ServerFlags& flags, const std::string& path, const std::string& text,
                  SettingSource source, Applier& applier) {
  struct Entry {
    std::string key, value;
    int line;
  };
  std::vector<Entry> global, main_section;
  std::string section = "default";
  int number = 0;
  for (const auto raw : split(text, '\n')) {
    ++number;
    auto line = trim(raw);
    if (line.empty() || line.front() == ';' || line.front() == '#') {
      continue;
    }
    if (line.front() == '[') {
      const auto close = line.find(']');
      if (close == std::string_view::npos) {
        applier.warn(fmt::format("{}:{}: section header without ']'", path, number));
        continue;
      }
      section = std::string(trim(line.substr(1, close - 1)));
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) {
      applier.warn(
          fmt::format("{}:{}: not a 'key = value' line; llama.cpp refuses the whole "
                      "file",
                      path, number));
      continue;
    }
    auto value = trim(line.substr(eq + 1));
    // A comment may follow the value after whitespace.
    for (std::size_t i = 1; i < value.size(); ++i) {
      if ((value[i] == ';' || value[i] == '#') && (value[i - 1] == ' ' || value[i - 1] == '\t')) {
        value = trim(value.substr(0, i));
        break;
      }
    }
    Entry entry{std::string(trim(line.substr(0, eq))), std::string(value), number};
    if (section == "*") {
      global.push_back(std::move(entry));
    } else if (section == "default") {
      main_section.push_back(std::move(entry));
    }
  }
  for (const auto* entries : {&global, &main_section}) {
    for (const auto& entry : *entries) {
      const auto origin = fmt::format("{}:{}", path, entry.line);
      if (entry.key == "version") {
        continue;
      }
      const auto* spec = flags.find_by_key(entry.key);
      if (spec == nullptr) {
        applier.warn(
            fmt::format("{}: '{}' is not an option of this llama-server build; it is "
                        "ignored",
                        origin, entry.key));
        continue;
      }
      if (!spec->takes_value()) {
        const bool negative = ServerFlags::is_negative(*spec, "--" + entry.key) ||
                              ServerFlags::is_negative(*spec, "-" + entry.key);
        if (auto v = switch_value(*spec, entry.value, negative, false, applier, origin)) {
          applier.set(*spec, *v, source, origin);
        }
      } else {
        applier.set(*spec, entry.value, source, origin);
      }
    }
  }
}

void apply_environment(const ServerFlags& flags, const platform::Environment& env,
                       Applier& applier) {
  for (const auto& spec : flags.all()) {
    if (spec.env.empty()) {
      continue;
    }
    if (!spec.negative_names.empty()) {
      // llama.cpp also honours LLAMA_ARG_NO_<X> for switches that have a negative form.
      const auto negative_env = "LLAMA_ARG_NO_" + spec.env.substr(std::string("LLAMA_ARG_").size());
      if (starts_with(spec.env, "LLAMA_ARG_") && env.contains(negative_env)) {
        applier.set(spec, "false", SettingSource::environment, negative_env);
        continue;
      }
    }
    const auto value = env.get(spec.env);
    if (!value) {
      continue;
    }
    if (!spec.takes_value()) {
      if (auto v = switch_value(spec, *value, false, true, applier, spec.env)) {
        applier.set(spec, *v, SettingSource::environment, spec.env);
      }
    } else {
      applier.set(spec, *value, SettingSource::environment, spec.env);
    }
  }
}

void apply_argv(const ServerFlags& flags, const std::vector<std::string>& argv, Applier& applier) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const auto arg = normalize_long(argv[i]);
    const auto* spec = flags.find(arg);
    const auto origin = fmt::format("argv[{}] {}", i, argv[i]);
    if (spec == nullptr) {
      applier.warn(
          fmt::format("{}: this llama-server build does not accept '{}' (it would "
                      "refuse to start)",
                      origin, argv[i]));
      continue;
    }
    if (spec->removed()) {
      applier.warn(
          fmt::format("{}: this llama-server build aborts on it: {}", origin, spec->description));
    }
    const int count = spec->value_count();
    if (count == 0) {
      applier.set(*spec, ServerFlags::is_negative(*spec, arg) ? "false" : "true",
                  SettingSource::command_line, origin);
      continue;
    }
    if (i + static_cast<std::size_t>(count) >= argv.size()) {
      applier.warn(fmt::format("{}: the value is missing at the end of the command line", origin));
      break;
    }
    std::string value = argv[++i];
    for (int extra = 1; extra < count; ++extra) {
      value += ' ' + argv[++i];
    }
    applier.set(*spec, std::move(value), SettingSource::command_line, origin);
  }
}

}  // namespace

std::string_view source_name(SettingSource source) {
  switch (source) {
    case SettingSource::system_config:
      return "system config.ini";
    case SettingSource::user_config:
      return "user config.ini";
    case SettingSource::environment:
      return "environment";
    case SettingSource::command_line:
      return "command line";
  }
  return "?";
}

const SettingValue* EffectiveSettings::get(std::string_view name) const {
  std::string key(name);
  if (starts_with(name, "-")) {
    const auto alias = aliases.find(normalize_long(name));
    if (alias == aliases.end()) {
      return nullptr;
    }
    key = alias->second;
  }
  const auto it = values.find(key);
  return it == values.end() ? nullptr : &it->second;
}

bool EffectiveSettings::is_on(std::string_view name) const {
  const auto* v = get(name);
  return v != nullptr && is_truthy(v->value);
}

bool EffectiveSettings::is_off(std::string_view name) const {
  const auto* v = get(name);
  return v != nullptr && is_falsey(v->value);
}

SettingInputs gather_inputs(const platform::Sysroot& root, const platform::Environment& env,
                            std::vector<std::string> argv) {
  SettingInputs inputs;
  inputs.env = env;
  inputs.argv = std::move(argv);
  const auto read_config = [&](const std::string& path, std::optional<std::string>& target) {
    if (!root.exists(path)) {
      return;
    }
    if (auto text = root.read_file(path)) {
      target = std::move(*text);
    } else {
      inputs.warnings.push_back(
          fmt::format("{}; the settings it holds are unknown", text.error().message));
    }
  };
  read_config(inputs.system_config_path, inputs.system_config);
  std::string config_home;
  if (const auto xdg = env.get("XDG_CONFIG_HOME"); xdg && starts_with(*xdg, "/")) {
    config_home = *xdg;
  } else if (const auto home = env.get("HOME"); home && starts_with(*home, "/")) {
    config_home = *home + "/.config";
  }
  if (!config_home.empty()) {
    inputs.user_config_path = config_home + "/llama.cpp/config.ini";
    read_config(inputs.user_config_path, inputs.user_config);
  }
  return inputs;
}

EffectiveSettings resolve_settings(const ServerFlags& flags, const SettingInputs& inputs) {
  EffectiveSettings out;
  for (const auto& spec : flags.all()) {
    for (const auto* list : {&spec.names, &spec.negative_names}) {
      for (const auto& name : *list) {
        out.aliases.emplace(name, spec.key());
      }
    }
  }
  out.warnings = inputs.warnings;
  Applier applier(out);
  if (inputs.system_config) {
    apply_config(flags, inputs.system_config_path, *inputs.system_config,
                 SettingSource::system_config, applier);
  }
  if (inputs.user_config) {
    apply_config(flags, inputs.user_config_path, *inputs.user_config, SettingSource::user_config,
                 applier);
  }
  apply_environment(flags, inputs.env, applier);
  apply_argv(flags, inputs.argv, applier);
  return out;
}

}  // namespace gb10tune::server
