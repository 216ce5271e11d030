// The starting half of `gb10tune launch`: the start shown as it goes, and its outcome.
#pragma once

#include "context.hpp"
#include "gb10tune/launch/launch_session.hpp"
#include "gb10tune/report/launch_report.hpp"

namespace gb10tune::cli {

// Starts the previewed command under `lease` (launch::begin_launch), its load shown on stderr,
// waits for /health, measures it and prints the outcome (text or, with `json`, the launch
// document with "started" and "calibration"); returns the exit code (0, 5 or 130).
ExitCode start_launch(Context& ctx, const launch::LaunchLease& lease,
                      const report::LaunchPreview& preview, const launch::LaunchSettings& settings,
                      bool json);

}  // namespace gb10tune::cli
