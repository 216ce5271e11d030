// `gb10tune launch`: its options (the launch settings' from their one table, the rest its
// own), then the planner's decisions rendered: a preview, a refusal, an export or a start.
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `launch` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_launch(CLI::App& app);

}  // namespace gb10tune::cli
