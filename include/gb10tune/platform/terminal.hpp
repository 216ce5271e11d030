// What stderr is: a terminal, and how wide.
#pragma once

#include <cstddef>

namespace gb10tune::platform {

// The width in columns of the terminal open on `fd` (TIOCGWINSZ); 0 when `fd` is not a
// terminal or the width is unknown. Never fails.
std::size_t terminal_columns(int fd);

}  // namespace gb10tune::platform
