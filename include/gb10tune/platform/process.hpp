// Running a short-lived helper program and capturing its output (never through a shell).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// What a finished program left behind.
struct CapturedRun {
  int exit_status = -1;    // exit code, or -1 when it was killed by a signal
  int signal = 0;          // the terminating signal, 0 when it exited
  bool timed_out = false;  // true when it was killed for running past the timeout
  std::string output;      // stdout and stderr interleaved, truncated at the output limit
};

// Runs argv[0] (looked up in PATH when it has no slash) with stdin from /dev/null, stdout
// and stderr captured together (at most `max_output` bytes kept), killing its process group
// with SIGKILL once `timeout` has passed, whether it still writes or has closed its output and
// runs on. An Error when it cannot be started at all (not found, not executable), or when it
// does not end within 5 s of SIGKILL (stuck in the kernel; it is left behind).
Expected<CapturedRun> run_capture(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout,
                                  std::size_t max_output = 64 * 1024);

}  // namespace gb10tune::platform
