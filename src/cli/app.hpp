// The gb10tune command line: global options, the table of subcommands, dispatch, and the
// mapping of parse errors to exit code 2.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "context.hpp"

namespace gb10tune::cli {

// Every subcommand with its options as CLI11 holds them, and the runner of each top-level one.
// Built afresh for each run; tests walk it to check option names and help.
struct CommandLine {
  CLI::App app;
  std::string sysroot;   // the hidden global --sysroot
  bool version = false;  // --version
  bool json = false;     // the global --json (with --version)
  std::vector<std::pair<CLI::App*, Runner>> commands;
};

// The whole command line, ready to parse. Never fails.
std::unique_ptr<CommandLine> make_command_line();

// Parses argv, runs the chosen subcommand against `ctx`, and returns the process exit code.
int run_cli(int argc, const char* const* argv, Context& ctx);

// The real process: environment, stdout/stderr, the system GPU backend, the clock.
int main_entry(int argc, char** argv);

}  // namespace gb10tune::cli
