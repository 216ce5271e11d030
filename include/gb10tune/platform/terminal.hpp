// What stdout and stderr are: terminals or not, and how wide.
#pragma once

#include <cstddef>

namespace gb10tune::platform {

// The descriptors of stdout and stderr.
inline constexpr int kStdoutFd = 1;
inline constexpr int kStderrFd = 2;

// Whether `fd` is open on a terminal (isatty(3)).
bool is_terminal(int fd);

// The width in columns of the terminal open on `fd` (TIOCGWINSZ); 0 when `fd` is not a
// terminal or the width is unknown. Never fails.
std::size_t terminal_columns(int fd);

}  // namespace gb10tune::platform
