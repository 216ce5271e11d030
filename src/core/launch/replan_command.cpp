#include "gb10tune/launch/replan_command.hpp"

#include <string_view>

#include "gb10tune/launch/setting_specs.hpp"

namespace gb10tune::launch {

namespace {

namespace fs = std::filesystem;

// The settings whose value is a path on this machine.
bool is_path_setting(std::string_view key) {
  return key == "model" || key == "mmproj" || key == "models_dir" || key == "llama_server";
}

// `text` as an absolute path when it is a relative one ("~/…" and the words auto and none stay).
std::string absolute_path(const std::string& text, const fs::path& cwd) {
  if (text.empty() || text.front() == '/' || text.front() == '~' || text == "auto" ||
      text == "none") {
    return text;
  }
  return (cwd / text).lexically_normal().string();
}

// A profile names a file when it holds a '/' or ".json" (profile.cpp reads it so).
std::string profile_word(const std::string& profile, const fs::path& cwd) {
  if (profile.find('/') == std::string::npos && profile.find(".json") == std::string::npos) {
    return profile;
  }
  return absolute_path(profile, cwd);
}

// The option's first long name: "--model" of "--model,-m".
std::string long_name(std::string_view names) {
  return std::string(names.substr(0, names.find(',')));
}

// The option text of a setting's value, as its option parses it back.
std::string value_word(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// The words that set `key` to `value`: its switch for that value, else its option and value.
std::vector<std::string> setting_words(const std::string& key, const nlohmann::json& value,
                                       const fs::path& cwd) {
  const SettingSpec* spec = find_setting_spec(key);
  if (spec == nullptr) {
    return {};
  }
  for (const SettingFlag& flag : spec->flags) {
    if (flag.value == value) {
      return {std::string(flag.name)};
    }
  }
  if (spec->option.empty()) {
    return {};
  }
  std::string word = value_word(value);
  if (is_path_setting(key)) {
    word = absolute_path(word, cwd);
  }
  return {long_name(spec->option), word};
}

}  // namespace

std::vector<std::string> replan_argv(const std::string& program, const LaunchRequest& request,
                                     const fs::path& cwd, const std::string& server_path) {
  std::vector<std::string> argv{program, "launch", "--foreground"};
  for (const auto& [key, value] : request.values.items()) {
    const auto words = setting_words(key, value, cwd);
    argv.insert(argv.end(), words.begin(), words.end());
  }
  if (!request.values.contains("llama_server") && !server_path.empty()) {
    argv.insert(argv.end(), {"--llama-server", server_path});
  }
  if (request.ctx_size) {
    argv.insert(argv.end(), {"--ctx-size", std::to_string(*request.ctx_size)});
  }
  if (!request.profile.empty()) {
    argv.insert(argv.end(), {"--profile", profile_word(request.profile, cwd)});
  }
  if (request.backend != "auto") {
    argv.insert(argv.end(), {"--backend", request.backend});
  }
  if (!request.rpc.empty()) {
    argv.insert(argv.end(), {"--rpc", request.rpc});
  }
  if (request.force) {
    argv.emplace_back("--force");
  }
  if (!request.extra.empty()) {
    argv.emplace_back("--");
    argv.insert(argv.end(), request.extra.begin(), request.extra.end());
  }
  return argv;
}

bool replans_by_default(std::string_view kind) {
  return kind == "systemd" || kind == "llama-swap";
}

}  // namespace gb10tune::launch
