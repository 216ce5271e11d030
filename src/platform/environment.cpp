#include "gb10tune/platform/environment.hpp"

extern char** environ;

namespace gb10tune::platform {

Environment Environment::from_envp(const char* const* envp) {
  Environment env;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    const std::string entry(*envp);
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      continue;  // not a NAME=VALUE entry; execve would pass it, but no name can be looked up
    }
    env.m_vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

Environment Environment::current() {
  return from_envp(environ);
}

std::optional<std::string> Environment::get(const std::string& name) const {
  const auto it = m_vars.find(name);
  if (it == m_vars.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::vector<std::string> Environment::to_strings() const {
  std::vector<std::string> out;
  out.reserve(m_vars.size());
  for (const auto& [name, value] : m_vars) {
    out.push_back(name + "=" + value);
  }
  return out;
}

}  // namespace gb10tune::platform
