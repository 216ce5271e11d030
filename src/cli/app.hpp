// The gb10tune command line: global options, the table of subcommands, dispatch, and the
// mapping of parse errors to exit code 2.
#pragma once

#include "context.hpp"

namespace gb10tune::cli {

// Parses argv, runs the chosen subcommand against `ctx`, and returns the process exit code.
int run_cli(int argc, const char* const* argv, Context& ctx);

// The real process: environment, stdout/stderr, the system GPU backend, the clock.
int main_entry(int argc, char** argv);

}  // namespace gb10tune::cli
