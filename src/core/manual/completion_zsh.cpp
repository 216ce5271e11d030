#include <fmt/format.h>

#include "gb10tune/manual/completion.hpp"
#include "gb10tune/util/shell_quote.hpp"

namespace gb10tune::manual {

namespace {

// A "name:description" entry of _describe, colons in the name escaped, quoted for zsh.
std::string zsh_entry(std::string_view name, std::string_view description) {
  std::string escaped;
  for (const char c : name) {
    escaped += c == ':' ? "\\:" : std::string(1, c);
  }
  return shell_quote(escaped + ":" + menu_text(description));
}

std::string zsh_value_action(const OptionEntry& option) {
  switch (option.kind) {
    case ValueKind::choice: {
      std::string words;
      for (const std::string& choice : option.choices) {
        words += " " + shell_quote(choice);
      }
      return "compadd --" + words;
    }
    case ValueKind::model_file:
      return "_files -g '*.gguf'";
    case ValueKind::path:
      return "_files";
    default:
      return "_message " + shell_quote(option.value_text.empty() ? "value" : option.value_text);
  }
}

std::string zsh_entries(const CommandEntry& root) {
  std::string out;
  for (const CommandEntry* command : all_commands(root)) {
    std::string entries;
    for (const CommandEntry& sub : command->subcommands) {
      entries += "\n      " + zsh_entry(sub.path.back(), sub.description);
    }
    for (const OptionEntry& option : command->options) {
      for (const std::string& name : option.names) {
        entries += "\n      " + zsh_entry(name, option.help);
      }
    }
    out +=
        fmt::format("    {}) entries=({}\n    ) ;;\n", shell_quote(command_key(*command)), entries);
  }
  return out;
}

}  // namespace

std::string render_zsh_completion(const CommandEntry& root) {
  // `path` is zsh's array tied to PATH: the command reached is `cmdpath`.
  return fmt::format(
      "#compdef gb10tune\n"
      "# zsh completion for gb10tune, generated from its option tables when it was built.\n"
      "_gb10tune() {{\n"
      "  local cur=${{words[CURRENT]}} prev=${{words[CURRENT-1]}} cmdpath='' word i\n"
      "  local -a entries\n"
      "  for ((i = 2; i < CURRENT; i++)); do\n"
      "    word=${{words[i]}}\n"
      "    [[ $word == -- ]] && {{ _files; return }}  # llama-server's own arguments follow\n"
      "{}"
      "  _describe -t commands gb10tune entries\n"
      "}}\n"
      "_gb10tune \"$@\"\n",
      sh_dispatch(root, zsh_value_action, "return", zsh_entries(root)));
}

}  // namespace gb10tune::manual
