// `gb10tune launch`: for now its dry run, the exact memory plan of a model and configuration.
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `launch` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_launch(CLI::App& app);

}  // namespace gb10tune::cli
