// Which CPU features a llama-server build uses: ggml's `system_info:` line, from the server's
// log (older builds print it at every start; builds of 2026-08 only at -lv 4) or from running
// the binary briefly at -lv 4.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::server {

// The line of the current builds' (2026-08) log that opens every start of the server.
inline constexpr std::string_view kRunStartMarker = "common_params_print_info: verbosity";

// The part of an appended-to log written by the server's last start: from the last
// kRunStartMarker line, else (older builds, which lack it and print system_info at every
// start) from the last `system_info:` line, else the whole text.
std::string_view last_run_of_log(std::string_view log_text);

// The last `system_info:` line of `text` from "system_info:" to its end; nullopt when none.
std::optional<std::string_view> find_system_info_line(std::string_view text);

// Runs `server_path -lv 4 -m <missing file> --host <private dir>/…sock`: the build prints its
// system_info line and exits when the model is not found, without touching a TCP port or a
// model. Returns the line; an Error naming the binary and what it printed when it cannot run or
// prints no such line (an older build without -lv, which logs the line at every start anyway),
// or, without running it, why it may not be run (trust::runnable_binary).
Expected<std::string> read_build_system_info(const std::string& server_path,
                                             std::chrono::milliseconds timeout);

}  // namespace gb10tune::server
