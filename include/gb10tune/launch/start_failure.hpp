// Why a llama-server did not become ready, told from the last lines of its log. Pure
// functions: no I/O.
#pragma once

#include <string>
#include <string_view>

namespace gb10tune::launch {

// The causes launch tells apart when a server does not become ready.
enum class StartFailure {
  out_of_memory,  // cudaMalloc / ggml allocation failed, or killed by the kernel's OOM killer
  unknown_flag,   // the build rejected an option ("error: invalid argument: --foo", removed)
  bad_model,      // the model file is missing, truncated or not GGUF
  port_in_use,    // the HTTP socket could not be bound
  crashed,        // it exited (or was killed) for another reason
  timed_out,      // no /health 200 and no log progress within the timeout
  interrupted,    // the user pressed Ctrl-C while waiting
  spawn_failed,   // the binary could not be executed at all
};

// "out of memory", "unknown flag", "bad model file", "port in use", "crashed", "timed out",
// "interrupted", "could not be started".
std::string_view failure_name(StartFailure failure);

// Classifies a failed start from the text the server logged during this start (its last lines
// suffice). `timed_out` wins over any text; an allocation failure wins over the model-loading
// errors it causes; text with no known message is `crashed`. Never fails.
StartFailure classify_failure(std::string_view log_tail, bool timed_out);

// The cause in plain words with the fix, one paragraph (no trailing newline).
std::string failure_advice(StartFailure failure);

// The log line that shows the cause (the first line matching the classification), "" when
// there is none.
std::string failure_evidence(std::string_view log_tail, StartFailure failure);

// The last `count` lines of `text` (a final partial line counts as a line).
std::string last_lines(std::string_view text, std::size_t count);

}  // namespace gb10tune::launch
