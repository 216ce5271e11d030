#include "gb10tune/platform/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

namespace gb10tune::platform {

bool is_terminal(int fd) {
  return ::isatty(fd) == 1;
}

std::size_t terminal_columns(int fd) {
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) != 0) {
    return 0;
  }
  return size.ws_col;
}

}  // namespace gb10tune::platform
