#include "gb10tune/launch/server_binary.hpp"

#include <fmt/format.h>

#include <ctime>
#include <filesystem>

#include "gb10tune/platform/file_facts.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::launch {

namespace fs = std::filesystem;

std::string expand_home(const std::string& path, const platform::Environment& env) {
  if (path == "~" || starts_with(path, "~/")) {
    if (const auto home = env.get("HOME"); home && !home->empty()) {
      return *home + path.substr(1);
    }
  }
  return path;
}

Expected<std::string> resolve_server_binary(const std::string& name_or_path,
                                            const platform::Environment& env) {
  const auto how = std::string(
      "build llama.cpp (`gb10tune probe` prints the build line for this machine) and put "
      "llama-server on PATH, or give --llama-server PATH");
  if (name_or_path.find('/') != std::string::npos || starts_with(name_or_path, "~")) {
    std::error_code ec;
    const auto path = fs::absolute(expand_home(name_or_path, env), ec);
    if (!platform::is_executable_file(path)) {
      return Error{
          fmt::format("llama-server {} {}; {}", path.string(),
                      fs::exists(path, ec) ? "is not an executable file" : "does not exist", how),
          ExitCode::usage};
    }
    return path.lexically_normal().string();
  }
  const auto path_var = env.get("PATH").value_or("");
  for (const auto dir : split(path_var, ':')) {
    if (dir.empty()) {
      continue;
    }
    const auto candidate = fs::path(std::string(dir)) / name_or_path;
    if (platform::is_executable_file(candidate)) {
      std::error_code ec;
      return fs::absolute(candidate, ec).lexically_normal().string();
    }
  }
  return Error{fmt::format("{} is not on PATH; {}", name_or_path, how), ExitCode::usage};
}

std::string server_build_identity(const std::string& path) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  const std::string name = ec ? path : real.string();
  const auto stamp = platform::file_stamp(name);
  if (!stamp) {
    return name;
  }
  std::tm tm{};
  const auto modified = static_cast<std::time_t>(stamp->modified_s);
  ::gmtime_r(&modified, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return fmt::format("{}, {} bytes, {}", name, stamp->size, when);
}

}  // namespace gb10tune::launch
