// `gb10tune probe`: machine facts, memory budget, GPU, build line and advice.
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `probe` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_probe(CLI::App& app);

}  // namespace gb10tune::cli
