// The settings a llama-server process really runs with, from all four places it reads them
// (K16, later wins): /etc/llama.cpp/config.ini, the user's llama.cpp/config.ini, LLAMA_ARG_*
// environment variables, and the command line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/server/server_flags.hpp"

namespace gb10tune::server {

// Where a setting came from, in llama.cpp's order of precedence.
enum class SettingSource { system_config, user_config, environment, command_line };

// "system config.ini", "user config.ini", "environment", "command line".
std::string_view source_name(SettingSource source);

// The final value of one option and where it was set.
struct SettingValue {
  std::string value;  // as given; switches read "true"/"false" (a negative spelling → "false")
  SettingSource source = SettingSource::command_line;
  std::string origin;  // "/etc/llama.cpp/config.ini:3", "LLAMA_ARG_CTX_SIZE", "argv[4] -c"
};

// The raw inputs: what each place holds. Config texts are nullopt when the file is absent.
struct SettingInputs {
  std::string system_config_path = "/etc/llama.cpp/config.ini";
  std::optional<std::string> system_config;
  std::string user_config_path;  // ${XDG_CONFIG_HOME:-$HOME/.config}/llama.cpp/config.ini
  std::optional<std::string> user_config;
  platform::Environment env;          // the server's environment (LLAMA_ARG_* are used)
  std::vector<std::string> argv;      // argv[0] is the program and is skipped
  std::vector<std::string> warnings;  // config files that exist but could not be read
};

// Every option set anywhere, keyed by FlagSpec::key(), plus what could not be understood.
struct EffectiveSettings {
  std::map<std::string, SettingValue> values;
  // Every assignment in precedence order, overridden ones included (for --explain and diffs).
  std::vector<std::pair<std::string, SettingValue>> history;
  std::vector<std::string> warnings;  // unknown keys/args, malformed lines, missing values
  // Every spelling of every option the build knows ("-c", "--ctx-size") → its key.
  std::map<std::string, std::string, std::less<>> aliases;

  // The final value of option `name`: a key ("ctx-size") or any spelling with dashes
  // ("-c"); nullptr when it is not set anywhere or the build has no such option.
  const SettingValue* get(std::string_view name) const;
  // True when switch `name` is set and on ("true", "1", "on", "enabled").
  bool is_on(std::string_view name) const;
  // True when `name` is set and explicitly off ("false", "0", "off", "disabled").
  bool is_off(std::string_view name) const;
};

// Reads the two config files for a process whose environment is `env` (its XDG_CONFIG_HOME
// and HOME decide the user file), under `root`. A file that exists but cannot be read becomes
// a warning (carried into resolve_settings' result), never a silent skip.
SettingInputs gather_inputs(const platform::Sysroot& root, const platform::Environment& env,
                            std::vector<std::string> argv);

// Applies the inputs in llama.cpp's order against the options `flags` knows.
EffectiveSettings resolve_settings(const ServerFlags& flags, const SettingInputs& inputs);

}  // namespace gb10tune::server
