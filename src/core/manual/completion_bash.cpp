#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gb10tune/manual/completion.hpp"
#include "gb10tune/util/shell_quote.hpp"

namespace gb10tune::manual {

namespace {

// What to offer after an option that takes a value.
std::string bash_value_action(const OptionEntry& option) {
  switch (option.kind) {
    case ValueKind::choice:
      return fmt::format("mapfile -t COMPREPLY < <(compgen -W {} -- \"$cur\")",
                         shell_quote(fmt::format("{}", fmt::join(option.choices, " "))));
    case ValueKind::model_file:
      return "compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- \"$cur\"; "
             "compgen -f -X '!*.gguf' -- \"$cur\")";
    case ValueKind::path:
      return "compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")";
    default:
      return "COMPREPLY=()";  // a number, a size, a name: nothing to offer
  }
}

std::string bash_words(const CommandEntry& root) {
  std::string out;
  for (const CommandEntry* command : all_commands(root)) {
    out += fmt::format("    {}) words={} ;;\n", shell_quote(command_key(*command)),
                       shell_quote(fmt::format("{}", fmt::join(completion_words(*command), " "))));
  }
  return out;
}

}  // namespace

std::string render_bash_completion(const CommandEntry& root) {
  return fmt::format(
      "# bash completion for gb10tune, generated from its option tables when it was built.\n"
      "_gb10tune() {{\n"
      "  local cur=${{COMP_WORDS[COMP_CWORD]}} prev='' cmdpath='' word words='' i\n"
      "  ((COMP_CWORD > 0)) && prev=${{COMP_WORDS[COMP_CWORD - 1]}}\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    word=${{COMP_WORDS[i]}}\n"
      "    if [[ $word == -- ]]; then  # llama-server's own arguments follow\n"
      "      compopt -o filenames 2>/dev/null\n"
      "      mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
      "      return 0\n"
      "    fi\n"
      "{}"
      "  mapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n"
      "}}\n"
      "complete -F _gb10tune gb10tune\n",
      sh_dispatch(root, bash_value_action, "return 0", bash_words(root)));
}

}  // namespace gb10tune::manual
