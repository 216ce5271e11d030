// man pages in roff (man(7) macros) from the command tree: one page per command, named after
// its words (gb10tune-bench-server(1)), with its description, options, subcommands and notes.
#pragma once

#include <string>
#include <string_view>

#include "gb10tune/manual/command_tree.hpp"

namespace gb10tune::manual {

// The file name of `command`'s page: "gb10tune-launch.1".
std::string man_page_file(const CommandEntry& command);

// The page of `command` (one of the commands under `root`, or root itself) for the tool
// version `version`. The page carries no date, so that two builds of one version write the
// same bytes. Never fails.
std::string render_man_page(const CommandEntry& root, const CommandEntry& command,
                            std::string_view version);

// `text` escaped for roff: backslashes, a leading '.' or '\'' and minus signs of option names
// made literal.
std::string roff_escape(std::string_view text);

}  // namespace gb10tune::manual
