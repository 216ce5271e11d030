// The process exit codes of gb10tune, one enum for the whole tool (documented in README.md).
#pragma once

namespace gb10tune {

enum class ExitCode : int {
  ok = 0,              // the job ran and every check passed
  failed = 1,          // a check failed or the job failed
  usage = 2,           // bad command line or bad input named on it
  memory_refused = 3,  // the memory pre-check refused the plan
  no_gpu = 4,          // a GPU job found no usable GPU
  server_failed = 5,   // llama-server failed to start or become ready
  interrupted = 130,   // stopped by SIGINT
};

// The integer a process returns for `code`.
constexpr int to_int(ExitCode code) {
  return static_cast<int>(code);
}

}  // namespace gb10tune
