// The CLI11 option tables as the manual's command tree, for the man pages and completions.
#pragma once

#include <CLI/CLI.hpp>

#include "gb10tune/manual/command_tree.hpp"

namespace gb10tune::cli {

// `app` and every subcommand under it, with their named options, positional arguments,
// descriptions and footers; hidden options and subcommands (empty group) are left out.
// Never fails.
manual::CommandEntry describe_command_tree(const CLI::App& app);

}  // namespace gb10tune::cli
