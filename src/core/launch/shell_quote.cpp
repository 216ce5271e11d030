#include "gb10tune/launch/shell_quote.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gb10tune::launch {

namespace {

bool is_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_-+=:,./@%").find(c) != std::string_view::npos;
}

}  // namespace

std::string shell_quote(std::string_view word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), is_safe)) {
    return std::string(word);
  }
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& word : argv) {
    out += (out.empty() ? "" : " ") + shell_quote(word);
  }
  return out;
}

std::string systemd_quote(std::string_view word) {
  std::string body;
  bool needs_quotes = word.empty();
  for (const char c : word) {
    switch (c) {
      case '\\':
        body += "\\\\";
        needs_quotes = true;
        break;
      case '"':
        body += "\\\"";
        needs_quotes = true;
        break;
      case '$':
        body += "$$";
        break;
      case '%':
        body += "%%";
        break;
      case '\n':
        body += "\\n";
        needs_quotes = true;
        break;
      case '\t':
        body += "\\t";
        needs_quotes = true;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          body += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
          needs_quotes = true;
        } else {
          needs_quotes = needs_quotes || c == ' ' || c == '\'' || c == ';';
          body += c;
        }
    }
  }
  return needs_quotes ? "\"" + body + "\"" : body;
}

std::string render_systemd_unit(const SystemdUnit& unit) {
  std::string exec;
  for (const auto& word : unit.argv) {
    exec += (exec.empty() ? "" : " ") + systemd_quote(word);
  }
  std::string out = fmt::format(
      "# Written by gb10tune launch --print systemd. Install as a user unit:\n"
      "#   ~/.config/systemd/user/llama-server.service, then\n"
      "#   systemctl --user daemon-reload && systemctl --user enable --now llama-server\n"
      "# and check it after every start with `gb10tune verify`.\n"
      "[Unit]\n"
      "Description={}\n"
      "After=network.target\n"
      "\n"
      "[Service]\n"
      "Type=exec\n"
      "ExecStart={}\n",
      unit.description, exec);
  for (const auto& name : unit.unset_env) {
    out += fmt::format("UnsetEnvironment={}\n", name);
  }
  if (!unit.working_directory.empty()) {
    out += fmt::format("WorkingDirectory={}\n", systemd_quote(unit.working_directory));
  }
  out +=
      "Restart=on-failure\n"
      "RestartSec=10\n"
      "TimeoutStartSec=600\n"
      "\n"
      "[Install]\n"
      "WantedBy=default.target\n";
  return out;
}

}  // namespace gb10tune::launch
