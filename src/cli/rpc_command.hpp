// `gb10tune rpc start|stop|status`: the llama.cpp RPC worker (rpc-server) of a two-machine
// setup, started with a clean environment, filed like launch's server, checked by its hello.
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `rpc` subcommand (with start, stop and status) to `app`.
Runner setup_rpc(CLI::App& app);

}  // namespace gb10tune::cli
