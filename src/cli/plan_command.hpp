// `gb10tune plan MODEL`: plan before a download, for this machine or a described one: the
// header alone (local, header-only, split, or over HTTP with range requests), launch's planner,
// and the what-fits table.
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `plan` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_plan(CLI::App& app);

}  // namespace gb10tune::cli
