#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/manual/completion.hpp"
#include "gb10tune/util/shell_quote.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::manual {

std::string command_key(const CommandEntry& command) {
  std::string key;
  for (const std::string& word : command.path) {
    key += (key.empty() ? "" : " ") + word;
  }
  return key;
}

std::string menu_text(std::string_view description, std::size_t width) {
  std::string_view text = trim(description.substr(0, description.find('\n')));
  const std::size_t stop = std::min(text.find(". "), text.find("; "));
  if (stop != std::string_view::npos) {
    text = text.substr(0, stop);
  }
  if (!text.empty() && text.back() == '.') {
    text.remove_suffix(1);
  }
  if (text.size() <= width) {
    return std::string(text);
  }
  std::string_view cut = text.substr(0, width - 1);
  cut = cut.substr(0, std::max<std::size_t>(cut.rfind(' '), 1));
  return std::string(cut) + "…";
}

std::vector<std::string> completion_words(const CommandEntry& command) {
  std::vector<std::string> words;
  for (const CommandEntry& sub : command.subcommands) {
    words.push_back(sub.path.back());
  }
  for (const OptionEntry& option : command.options) {
    words.insert(words.end(), option.names.begin(), option.names.end());
  }
  return words;
}

std::string transition_arms(
    const CommandEntry& root,
    const std::function<std::string(const std::string& pattern, const std::string& to)>& arm) {
  std::string out;
  for (const CommandEntry* command : all_commands(root)) {
    for (const CommandEntry& sub : command->subcommands) {
      out += arm(command_key(*command) + "|" + sub.path.back(), command_key(sub));
    }
  }
  return out;
}

namespace {

std::string sh_value_arms(const CommandEntry& root,
                          const std::function<std::string(const OptionEntry&)>& action,
                          std::string_view finish) {
  std::string out;
  for (const CommandEntry* command : all_commands(root)) {
    for (const OptionEntry& option : command->options) {
      if (option.kind == ValueKind::none) {
        continue;
      }
      std::string patterns;
      for (const std::string& name : option.names) {
        patterns += (patterns.empty() ? "" : "|") + shell_quote(command_key(*command) + "|" + name);
      }
      out += fmt::format("    {}) {}; {} ;;\n", patterns, action(option), finish);
    }
  }
  return out;
}

}  // namespace

std::string sh_dispatch(const CommandEntry& root,
                        const std::function<std::string(const OptionEntry&)>& action,
                        std::string_view finish, std::string_view command_arms) {
  const std::string transitions =
      transition_arms(root, [](const std::string& pattern, const std::string& to) {
        return fmt::format("      {}) cmdpath={} ;;\n", shell_quote(pattern), shell_quote(to));
      });
  return fmt::format(
      "    case \"$cmdpath|$word\" in\n{}    esac\n"
      "  done\n"
      "  case \"$cmdpath|$prev\" in\n{}  esac\n"
      "  case \"$cmdpath\" in\n{}  esac\n",
      transitions, sh_value_arms(root, action, finish), command_arms);
}

}  // namespace gb10tune::manual
