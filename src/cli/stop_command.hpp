// `gb10tune stop`: stop the llama-server that `gb10tune launch` started (or, with --all,
// every llama-server of this user).
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `stop` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_stop(CLI::App& app);

}  // namespace gb10tune::cli
