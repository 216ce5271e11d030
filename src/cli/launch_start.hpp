// The starting half of `gb10tune launch`: the start shown as it goes, and its outcome.
#pragma once

#include <filesystem>

#include "context.hpp"
#include "gb10tune/launch/launch_session.hpp"
#include "gb10tune/render/launch_render.hpp"

namespace gb10tune::cli {

// Starts the previewed command under `lease` (launch::begin_launch), its load shown on stderr,
// waits for /health, measures it and prints the outcome (text or, with `json`, the launch
// document with "started" and "calibration"); returns the exit code (0, 5 or 130).
ExitCode start_launch(Context& ctx, const launch::LaunchLease& lease,
                      const render::LaunchPreview& preview, const launch::LaunchSettings& settings,
                      bool json);

// `launch --foreground`: after what start_launch says of the environment, becomes the previewed
// command (launch::exec_server: the same pid, the pid file and record written for it, its output
// appended to `log`, "" = stdout and stderr), saying so on stderr first. Returns only when that
// fails: the exit code of the failure (2 for a binary that may not run, 5 otherwise).
ExitCode start_foreground(Context& ctx, const launch::LaunchLease& lease,
                          const render::LaunchPreview& preview,
                          const launch::LaunchSettings& settings, const std::filesystem::path& log);

}  // namespace gb10tune::cli
