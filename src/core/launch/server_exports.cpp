#include "gb10tune/launch/server_exports.hpp"

#include <fmt/format.h>

#include <optional>

#include "gb10tune/util/shell_quote.hpp"
#include "gb10tune/util/systemd_syntax.hpp"

namespace gb10tune::launch {

Expected<std::string> render_systemd_unit(const SystemdUnit& unit) {
  const auto exec = systemd::exec_line(unit.argv);
  if (!exec) {
    return exec.error();
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
      systemd::description(unit.description), *exec);
  for (const auto& name : unit.unset_env) {
    const auto word = systemd::variable_name(name);
    if (!word) {
      return word.error();
    }
    out += fmt::format("UnsetEnvironment={}\n", *word);
  }
  if (!unit.working_directory.empty()) {
    const auto directory = systemd::directory_path(unit.working_directory);
    if (!directory) {
      return directory.error();
    }
    out += fmt::format("WorkingDirectory={}\n", *directory);
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

namespace {

// A YAML double-quoted scalar: backslash, double quote and control characters escaped.
std::string yaml_quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string render_llama_swap_entry(const LlamaSwapEntry& entry) {
  std::string cmd = entry.unset_env.empty() ? "" : "/usr/bin/env";
  for (const auto& name : entry.unset_env) {
    cmd += " -u " + shell_quote(name);
  }
  bool port_seen = false;
  for (std::size_t i = 0; i < entry.argv.size(); ++i) {
    const std::string& word = entry.argv[i];
    if (!cmd.empty()) {
      cmd += ' ';
    }
    if (word.rfind("--port=", 0) == 0) {
      cmd += "--port ${PORT}";
      port_seen = true;
    } else if (word == "--port" && i + 1 < entry.argv.size()) {
      cmd += "--port ${PORT}";
      port_seen = true;
      ++i;
    } else {
      cmd += shell_quote(word);
    }
  }
  if (!port_seen) {
    cmd += " --port ${PORT}";
  }
  const char* how =
      entry.unset_env.empty()
          ? "# gb10tune launch --foreground plans, fits and cleans the environment at each start,\n"
            "# then becomes llama-server (llama-swap owns it). Check a start with `gb10tune "
            "verify`.\n"
          : "# The trap variable GGML_CUDA_ENABLE_UNIFIED_MEMORY is removed by env -u, since\n"
            "# llama-swap passes its own environment on. Check each start with\n"
            "# `gb10tune verify --url http://127.0.0.1:PORT`.\n";
  return fmt::format(
      "# Written by gb10tune launch --print llama-swap: this model's entry for llama-swap's\n"
      "# config.yaml (merge it into `models:`). llama-swap picks the port.\n"
      "{}"
      "models:\n"
      "  {}:\n"
      "    cmd: {}\n"
      "    ttl: {}\n"
      "    checkEndpoint: \"/health\"\n",
      how, yaml_quote(entry.name), yaml_quote(cmd), entry.ttl_seconds);
}

Expected<std::string> render_models_preset(const std::string& name,
                                           const std::vector<std::string>& argv,
                                           const server::ServerFlags& flags) {
  std::string body;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    std::string word = argv[i];
    std::optional<std::string> inline_value;
    if (const std::size_t eq = word.find('=');
        word.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = word.substr(eq + 1);
      word.resize(eq);
    }
    const server::FlagSpec* spec = flags.find(word);
    if (spec == nullptr) {
      return Error{
          fmt::format("{} is not an option of this llama-server build; it cannot be "
                      "written as a preset key",
                      word)};
    }
    std::string value = "true";
    if (spec->takes_value()) {
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < argv.size()) {
        value = argv[++i];
      } else {
        return Error{fmt::format("{} has no value in the planned command", word)};
      }
    }
    const std::string key = server::ServerFlags::is_negative(*spec, word)
                                ? word.substr(word.find_first_not_of('-'))
                                : spec->key();
    if (key == "host" || key == "port") {
      continue;  // the router gives each model its own address
    }
    if (value.find_first_of("\r\n") != std::string::npos) {
      return Error{
          fmt::format("the value of {} holds a line break; an INI preset cannot carry it", word)};
    }
    body += fmt::format("{} = {}\n", key, value);
  }
  return fmt::format(
      "; Written by gb10tune launch --print preset: this model's section for llama-server's\n"
      "; router mode (llama-server --models-preset FILE). The router passes its environment to\n"
      "; the model's server: start it without GGML_CUDA_ENABLE_UNIFIED_MEMORY (K2), e.g.\n"
      ";   env -u GGML_CUDA_ENABLE_UNIFIED_MEMORY llama-server --models-preset FILE\n"
      "version = 1\n"
      "\n"
      "[{}]\n"
      "{}",
      name, body);
}

}  // namespace gb10tune::launch
