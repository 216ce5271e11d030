// Becoming another program in place (execve): the process keeps its pid, its parent and its
// session, so that whoever started it (systemd, llama-swap) owns what runs next.
#pragma once

#include <string>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// Replaces this process with argv[0] (an absolute path; never looked up in PATH, never through
// a shell) run with exactly `env` (NAME=VALUE strings). Before the exec: stdout and stderr are
// pointed at `output_fd` when it is >= 0 (else left as they are), every other descriptor above
// stderr is marked close-on-exec, the signal mask is emptied and SIGINT, SIGTERM, SIGHUP,
// SIGPIPE and SIGQUIT get their default action, as a spawned server gets them. Returns only on
// failure: an Error naming argv[0] and the OS reason (missing, not executable, bad format);
// stdout and stderr may then already point at `output_fd`.
Error exec_replace(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   int output_fd);

}  // namespace gb10tune::platform
