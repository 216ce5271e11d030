// `gb10tune watch`: guard the llama-server that `gb10tune launch` started against the shared
// memory pool running out (stop it below a floor, optionally restart it), or print systemd
// units that run the watch and a periodic verify.
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `watch` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_watch(CLI::App& app);

}  // namespace gb10tune::cli
