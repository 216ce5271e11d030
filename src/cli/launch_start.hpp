// The starting half of `gb10tune launch`: the lock and pid-file checks before the memory
// check, then the start itself and its report.
#pragma once

#include "context.hpp"
#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/report/launch_report.hpp"

namespace gb10tune::cli {

// A launch that holds the launch lock.
class LaunchSession {
 public:
  // Takes the lock and checks the pid file: a server that launch started and that still runs
  // is an Error (ExitCode::failed) saying how to stop it; a stale pid file is removed with a
  // note on stderr.
  static Expected<LaunchSession> begin(Context& ctx);

  // Starts the previewed command, waits for /health, prints the outcome (text or JSON) and
  // returns the exit code (0, 5 or 130).
  ExitCode start(const report::LaunchPreview& preview, const launch::LaunchSettings& settings,
                 bool json);

 private:
  LaunchSession(Context& ctx, launch::StatePaths paths, launch::LaunchLock lock)
      : m_ctx(&ctx), m_paths(std::move(paths)), m_lock(std::move(lock)) {}

  Context* m_ctx;
  launch::StatePaths m_paths;
  launch::LaunchLock m_lock;
};

}  // namespace gb10tune::cli
