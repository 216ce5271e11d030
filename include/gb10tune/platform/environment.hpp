// The process environment as a value, so that commands can be run against a fake one.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gb10tune::platform {

class Environment {
 public:
  Environment() = default;
  // Builds from a null-terminated `environ`-style array; later duplicates win.
  static Environment from_envp(const char* const* envp);
  // The environment of this process.
  static Environment current();

  std::optional<std::string> get(const std::string& name) const;
  // True when `name` is present, whatever its value (even empty).
  bool contains(const std::string& name) const { return m_vars.count(name) != 0; }
  void set(const std::string& name, std::string value) { m_vars[name] = std::move(value); }
  void unset(const std::string& name) { m_vars.erase(name); }
  const std::map<std::string, std::string>& vars() const { return m_vars; }
  // NAME=VALUE strings, sorted by name, for execve.
  std::vector<std::string> to_strings() const;

 private:
  std::map<std::string, std::string> m_vars;
};

}  // namespace gb10tune::platform
