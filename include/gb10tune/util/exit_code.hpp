// The process exit codes of gb10tune, one enum for the whole tool (documented in README.md).
#pragma once

#include <csignal>
#include <string_view>

namespace gb10tune {

enum class ExitCode : int {
  ok = 0,              // the job ran and every check passed
  failed = 1,          // a check failed or the job failed
  usage = 2,           // bad command line or bad input named on it
  memory_refused = 3,  // the memory pre-check refused the plan
  no_gpu = 4,          // a GPU job found no usable GPU
  server_failed = 5,   // llama-server failed to start or become ready
  not_started = 6,     // refused before anything was started (the server's port is taken)
  interrupted = 130,   // stopped by SIGINT (128 + 2)
  terminated = 143,    // stopped by SIGTERM (128 + 15)
};

// Every exit code, in order.
inline constexpr ExitCode kExitCodes[] = {
    ExitCode::ok,        ExitCode::failed,        ExitCode::usage,       ExitCode::memory_refused,
    ExitCode::no_gpu,    ExitCode::server_failed, ExitCode::not_started, ExitCode::interrupted,
    ExitCode::terminated};

// The integer a process returns for `code`.
constexpr int to_int(ExitCode code) {
  return static_cast<int>(code);
}

// What `code` means for the whole tool, in a few words ("usage error").
constexpr std::string_view exit_code_meaning(ExitCode code) {
  switch (code) {
    case ExitCode::ok:
      return "ok";
    case ExitCode::failed:
      return "a check or the job failed";
    case ExitCode::usage:
      return "usage error";
    case ExitCode::memory_refused:
      return "memory pre-check refused";
    case ExitCode::no_gpu:
      return "no usable GPU for a GPU job";
    case ExitCode::server_failed:
      return "the server failed to start";
    case ExitCode::not_started:
      return "nothing was started (the server's port is taken)";
    case ExitCode::interrupted:
      return "interrupted (SIGINT, Ctrl-C)";
    case ExitCode::terminated:
      return "terminated (SIGTERM)";
  }
  return "unknown";
}

// The code of a job that `signal` stopped: 143 for SIGTERM, 130 for SIGINT and anything else
// that asks a job to stop.
constexpr ExitCode exit_code_for_signal(int signal) {
  return signal == SIGTERM ? ExitCode::terminated : ExitCode::interrupted;
}

}  // namespace gb10tune
