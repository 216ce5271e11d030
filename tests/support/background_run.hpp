// The real gb10tune binary run in the background, its output in a file, for the tests that
// signal it or watch what it does while it runs.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/platform/child_process.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {

struct BackgroundRun {
  TempDir dir;
  std::filesystem::path output = dir.path() / "output.txt";
  std::optional<platform::Child> child;

  // Starts `gb10tune args…` with this process's environment and `env` on top; a test failure
  // (and no child) when it cannot be spawned.
  BackgroundRun(const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env);
  // Terminates it (2 s grace) if it still runs.
  ~BackgroundRun();

  // Its exit, waiting up to `timeout`; nullopt while it still runs.
  std::optional<platform::ChildExit> wait(std::chrono::milliseconds timeout);
  // Waits up to `limit` until its output holds `part`; whether it did. It stops waiting early,
  // false, when the run has ended without printing it.
  bool wait_for_output(const std::string& part, std::chrono::milliseconds limit);
};

// Reaps `pid`, a child of this test, once it has ended; one still running after `limit` is
// killed (SIGKILL) and reaped, so that a stop that failed costs this test's time, not the run's.
void reap_child(int pid, std::chrono::milliseconds limit = std::chrono::seconds(10));

// Waits up to `limit` until process `pid` runs the program named `name` (its /proc exe's file
// name): a child just forked has not always replaced itself yet — under qemu-user never at once.
bool wait_for_exec(int pid, const std::string& name,
                   std::chrono::milliseconds limit = std::chrono::seconds(10));

// Polls `done` every 20 ms until it is true (true) or `limit` has passed (false): the tests'
// way to wait for a state, with a bound generous enough for a loaded machine.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit);

// Whether the file at `path` holds `part`; a file that does not exist (yet) holds nothing.
bool file_contains(const std::filesystem::path& path, const std::string& part);

}  // namespace gb10tune::testing
