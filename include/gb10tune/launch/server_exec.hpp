// `launch --foreground`: the planned server run in place of gb10tune (execve, the same pid), so
// that the supervisor that started gb10tune (systemd, llama-swap) owns the server, sends it its
// signals and gets its exit status.
#pragma once

#include <filesystem>

#include "gb10tune/launch/server_process.hpp"

namespace gb10tune::launch {

// Runs request.argv in place of this process, after the checks of start_server (the binary
// allowed to run, the state directory private, the port not answering yet) and after writing
// the pid file and the launch record for this pid (its start time, which an exec keeps, and the
// binary's real path, which /proc/<pid>/exe shows after it), so that verify, stop and watch find
// the server. The server's output goes to `log` (appended, after a header line) when it is not
// empty, else to this process's stdout and stderr; nothing waits for /health and nothing is
// measured (request.timeout and ready_check are not used). Returns only on failure, with
// start_server's Errors for the checks and ExitCode::server_failed when the state cannot be
// written or the exec fails; the pid file and record are then removed.
Error exec_server(const StartRequest& request, const std::filesystem::path& log);

}  // namespace gb10tune::launch
