// The real gb10tune binary run in the background, its output in a file, for the tests that
// signal it or watch what it does while it runs.
#pragma once

#include <chrono>
#include <filesystem>
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
};

}  // namespace gb10tune::testing
