// `gb10tune verify`: is the running llama-server really on the fast path?
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `verify` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_verify(CLI::App& app);

}  // namespace gb10tune::cli
