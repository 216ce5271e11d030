// `gb10tune report`: gathers the state directory's saved results into one HTML page, a Markdown
// version for forum posts, or one JSON document; the gathering and the pages are the core's
// (report/report_bundle.hpp, report/report_pages.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds the `report` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_report(CLI::App& app);

}  // namespace gb10tune::cli
