// Shell completion scripts from the command tree: every command, option and enumerated value,
// GGUF files for the model options and files for path options. Each script walks the words
// typed so far along the tree to know the command, so one script serves every command.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/manual/command_tree.hpp"

namespace gb10tune::manual {

// A bash script defining _gb10tune and `complete -F _gb10tune gb10tune`; needs only bash
// itself (compgen, compopt), not the bash-completion package. Never fails.
std::string render_bash_completion(const CommandEntry& root);

// A zsh completion file (#compdef gb10tune, for a folder on $fpath, named _gb10tune).
std::string render_zsh_completion(const CommandEntry& root);

// A fish completion file (gb10tune.fish, for vendor_completions.d).
std::string render_fish_completion(const CommandEntry& root);

// `command`'s words joined by single spaces ("bench server"; "" for the root): the key every
// script uses for the command the typed words reached.
std::string command_key(const CommandEntry& command);

// A description cut for a completion menu: its first sentence, at most `width` characters.
std::string menu_text(std::string_view description, std::size_t width = 72);

// Every name a word may take at `command`: its subcommands, then every option name.
std::vector<std::string> completion_words(const CommandEntry& command);

// One arm per subcommand in the tree, `arm(pattern, to)`: `pattern` is the command the typed
// words reached and the subcommand's name ("bench|server"), `to` the subcommand's key.
std::string transition_arms(
    const CommandEntry& root,
    const std::function<std::string(const std::string& pattern, const std::string& to)>& arm);

// What the bash and zsh scripts share after the head of their loop over the typed words: the
// `case` that follows subcommands (the loop's end), the `case "$cmdpath|$prev"` that runs
// `action(option)` then `finish` ("return 0") after an option that takes a value, and the
// `case "$cmdpath"` whose arms are `command_arms`.
std::string sh_dispatch(const CommandEntry& root,
                        const std::function<std::string(const OptionEntry&)>& action,
                        std::string_view finish, std::string_view command_arms);

}  // namespace gb10tune::manual
