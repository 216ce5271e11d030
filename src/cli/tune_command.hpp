// `gb10tune tune`: its options, the progress on stderr, the report and the saved profile; the
// search, the measurements and every decision are the core's (tune/tune_session.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `tune` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_tune(CLI::App& app);

}  // namespace gb10tune::cli
