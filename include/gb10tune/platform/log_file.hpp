// The server's log, which gb10tune shares with the server: opened safely, appended to in one
// write so that gb10tune's notes and the server's output do not cut into each other.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "gb10tune/platform/fd.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// Opens `path` for appending server output: O_APPEND, created 0600, never through a symlink,
// close-on-exec (the child gets its own copy through Child::spawn). An Error naming the path.
Expected<Fd> open_log_for_append(const std::filesystem::path& path);

// Appends `text` to `log` (a descriptor from open_log_for_append) and returns where it begins:
// the file's size just before, 0 when the system cannot tell. Best effort: a note in a log is
// not worth a failure, so a write that fails is not reported.
std::uint64_t append_text(const Fd& log, std::string_view text);

// Appends `line` and a newline to the log at `path`, opened as open_log_for_append opens it.
// Best effort like append_text: false when the log cannot be opened.
bool append_line(const std::filesystem::path& path, std::string_view line);

}  // namespace gb10tune::platform
