#include "gb10tune/manual/command_tree.hpp"

#include <algorithm>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::manual {

namespace {

// The options that take a GGUF model (launch's and bench server's --model, the projector).
constexpr std::string_view kModelOptions[] = {"--model", "-m", "--mmproj", "--draft-model"};

// Words of a value text or an option name that say the value is a file or folder.
constexpr std::string_view kPathWords[] = {"FILE", "DIR", "PATH", "FOLDER"};

// The values of a CLI11 set validator's description, "{a,b,c}"; empty when it is not one.
std::vector<std::string> set_validator_values(std::string_view description) {
  std::vector<std::string> values;
  if (description.size() < 3 || description.front() != '{' || description.back() != '}') {
    return values;
  }
  for (const std::string_view value : split(description.substr(1, description.size() - 2), ',')) {
    if (!value.empty()) {
      values.emplace_back(trim(value));
    }
  }
  return values;
}

// The values of a value text like "on|off|auto"; empty unless every part is a lower-case word.
std::vector<std::string> text_choices(std::string_view value_text) {
  std::vector<std::string> values;
  if (value_text.find('|') == std::string_view::npos) {
    return values;
  }
  for (const std::string_view part : split(value_text, '|')) {
    const bool word = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    });
    if (!word) {
      return {};
    }
    values.emplace_back(part);
  }
  return values;
}

bool names_path(std::string_view value_text) {
  return std::any_of(std::begin(kPathWords), std::end(kPathWords), [&](std::string_view word) {
    return value_text.find(word) != std::string_view::npos;
  });
}

void collect_commands(const CommandEntry& command, std::vector<const CommandEntry*>& out) {
  out.push_back(&command);
  for (const CommandEntry& sub : command.subcommands) {
    collect_commands(sub, out);
  }
}

}  // namespace

OptionEntry classify_value(std::vector<std::string> names, bool takes_value,
                           std::string_view value_text, std::string help,
                           const std::vector<std::string>& validator_descriptions) {
  OptionEntry entry;
  entry.names = std::move(names);
  entry.value_text = std::string(value_text);
  entry.help = std::move(help);
  if (!takes_value) {
    entry.value_text.clear();
    return entry;
  }
  for (const std::string& description : validator_descriptions) {
    entry.choices = set_validator_values(description);
    if (!entry.choices.empty()) {
      entry.kind = ValueKind::choice;
      return entry;
    }
  }
  entry.choices = text_choices(value_text);
  const bool model = std::any_of(entry.names.begin(), entry.names.end(), [](const std::string& n) {
    return std::find(std::begin(kModelOptions), std::end(kModelOptions), n) !=
           std::end(kModelOptions);
  });
  if (!entry.choices.empty()) {
    entry.kind = ValueKind::choice;
  } else if (model) {
    entry.kind = ValueKind::model_file;
  } else if (names_path(value_text)) {
    entry.kind = ValueKind::path;
  } else {
    entry.kind = ValueKind::text;
  }
  return entry;
}

std::string command_name(const CommandEntry& command, char separator) {
  std::string name = "gb10tune";
  for (const std::string& word : command.path) {
    name += separator;
    name += word;
  }
  return name;
}

std::vector<const CommandEntry*> all_commands(const CommandEntry& root) {
  std::vector<const CommandEntry*> out;
  collect_commands(root, out);
  return out;
}

}  // namespace gb10tune::manual
