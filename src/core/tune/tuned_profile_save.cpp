// Saving a tune's winner where `launch --profile NAME` finds it.
#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/launch/profile.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/tune/tune_session.hpp"

namespace gb10tune::tune {

Status check_profile_name(const std::string& name) {
  const bool valid =
      !name.empty() && name.front() != '.' && name.size() <= 128 &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
      });
  if (!valid) {
    return Error{fmt::format("--profile-name {}: a profile name is lower-case letters, digits, "
                             "'.', '_' and '-' (not starting with '.'), as launch --profile NAME "
                             "finds it",
                             name),
                 ExitCode::usage};
  }
  if (launch::builtin_profiles().count(name) != 0) {
    return Error{fmt::format("--profile-name {}: that is a shipped profile's name, which launch "
                             "would pick first; choose another",
                             name),
                 ExitCode::usage};
  }
  return {};
}

Expected<std::filesystem::path> save_tuned_profile(const platform::Environment& env,
                                                   const std::string& name,
                                                   const nlohmann::json& document) {
  if (const Status valid = check_profile_name(name); !valid) {
    return valid.error();
  }
  if (!platform::config_dir(env)) {
    return Error{"no folder for profiles: set HOME or XDG_CONFIG_HOME (or pass --no-save)",
                 ExitCode::failed};
  }
  const std::filesystem::path dir = user_profile_dir(env);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Error{
        fmt::format("the profile folder {} cannot be created: {}", dir.string(), ec.message()),
        ExitCode::failed};
  }
  const std::filesystem::path path = dir / (name + ".json");
  if (const Status written = platform::write_file_atomic(path, document.dump(2) + "\n"); !written) {
    return Error{written.error().message, ExitCode::failed};
  }
  return path;
}

}  // namespace gb10tune::tune
