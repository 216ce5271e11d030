#include <fmt/format.h>

#include "gb10tune/manual/completion.hpp"

namespace gb10tune::manual {

namespace {

// `text` as one fish word: single-quoted, with \ and ' escaped as fish reads them.
std::string fish_quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\\' || c == '\'') {
      out += '\\';
    }
    out += c;
  }
  return out + "'";
}

std::string fish_condition(const CommandEntry& command) {
  return fish_quote(fmt::format("__gb10tune_command_is {}", fish_quote(command_key(command))));
}

std::string fish_transitions(const CommandEntry& root) {
  return transition_arms(root, [](const std::string& pattern, const std::string& to) {
    return fmt::format("            case {}\n                set cmdpath {}\n", fish_quote(pattern),
                       fish_quote(to));
  });
}

// -s/-l for each name, then what the value takes.
std::string fish_option(const OptionEntry& option) {
  std::string out;
  for (const std::string& name : option.names) {
    const bool is_long = name.size() > 2 && name[1] == '-';
    out += fmt::format(" {} {}", is_long ? "-l" : "-s", name.substr(is_long ? 2 : 1));
  }
  switch (option.kind) {
    case ValueKind::choice: {
      std::string words;
      for (const std::string& choice : option.choices) {
        words += (words.empty() ? "" : " ") + choice;
      }
      return out + " -x -a " + fish_quote(words);
    }
    case ValueKind::model_file:
      return out + " -x -a '(__fish_complete_suffix .gguf)'";
    case ValueKind::path:
      return out + " -r -F";
    case ValueKind::text:
      return out + " -x";
    default:
      return out;
  }
}

std::string fish_lines(const CommandEntry& root) {
  std::string out;
  for (const CommandEntry* command : all_commands(root)) {
    const std::string condition = fish_condition(*command);
    for (const CommandEntry& sub : command->subcommands) {
      out += fmt::format("complete -c gb10tune -n {} -a {} -d {}\n", condition,
                         fish_quote(sub.path.back()), fish_quote(menu_text(sub.description)));
    }
    for (const OptionEntry& option : command->options) {
      out += fmt::format("complete -c gb10tune -n {}{} -d {}\n", condition, fish_option(option),
                         fish_quote(menu_text(option.help)));
    }
  }
  return out;
}

}  // namespace

std::string render_fish_completion(const CommandEntry& root) {
  return fmt::format(
      "# fish completion for gb10tune, generated from its option tables when it was built.\n"
      "function __gb10tune_command_is\n"
      "    set -l cmdpath ''\n"
      "    for word in (commandline -opc)[2..-1]\n"
      "        switch \"$cmdpath|$word\"\n"
      "{}"
      "        end\n"
      "    end\n"
      "    test \"$cmdpath\" = \"$argv[1]\"\n"
      "end\n"
      "complete -c gb10tune -f\n"
      "{}",
      fish_transitions(root), fish_lines(root));
}

}  // namespace gb10tune::manual
