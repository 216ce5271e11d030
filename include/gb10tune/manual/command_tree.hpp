// The command line as data: every command with its options, taken from the option tables the
// CLI parses with, so that the man pages and the shell completions generated from it never
// lag behind an option. The CLI builds the tree; the renderers here only read it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gb10tune::manual {

// What an option's value is, for completion.
enum class ValueKind {
  none,        // a flag: no value
  text,        // anything (a number, a size, a name)
  choice,      // one of `choices`
  path,        // a file or folder
  model_file,  // a GGUF model file (*.gguf)
};

struct OptionEntry {
  std::vector<std::string> names;    // "-m", "--model": short names first, as CLI11 lists them
  std::string value_text;            // "N", "FILE", "on|off|auto"; "" for a flag
  std::string help;                  // the --help description
  ValueKind kind = ValueKind::none;  // see classify_value
  std::vector<std::string> choices;  // the allowed values when kind == choice
};

struct CommandEntry {
  std::vector<std::string> path;     // {} for gb10tune itself, {"bench", "server"}
  std::string description;           // the --help description
  std::string footer;                // the --help footer (exit codes), may be ""
  std::vector<OptionEntry> options;  // named options only, hidden ones left out
  // Positional arguments as the SYNOPSIS shows them: the value text ("FILE|URL") or name, in
  // [brackets] when optional, "..." after one that takes several, "-- " before one that comes
  // after "--" (its help begins "After --").
  std::vector<std::string> positionals;
  std::vector<CommandEntry> subcommands;
};

// The kind and choices of an option's value from what the option table says of it: its names,
// whether it takes a value, the text --help shows for the value ("N", "on|off|auto") and the
// descriptions of its validators (CLI11's IsMember describes itself as "{a,b,c}"). A set
// validator's values win; else a value text of lower-case words joined by '|' is a choice; a
// model option (--model, -m, --mmproj, --draft-model) takes a GGUF file; a value text or name
// naming a file, folder, path, binary or log takes a path; anything else is text.
OptionEntry classify_value(std::vector<std::string> names, bool takes_value,
                           std::string_view value_text, std::string help,
                           const std::vector<std::string>& validator_descriptions);

// `command`'s words joined by `separator` after "gb10tune": "gb10tune-bench-server" with '-'.
std::string command_name(const CommandEntry& command, char separator);

// Every command of the tree rooted at `root`, root first, depth first in table order.
std::vector<const CommandEntry*> all_commands(const CommandEntry& root);

}  // namespace gb10tune::manual
