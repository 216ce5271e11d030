#include "gb10tune/platform/terminal.hpp"

#include <sys/ioctl.h>

namespace gb10tune::platform {

std::size_t terminal_columns(int fd) {
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) != 0) {
    return 0;
  }
  return size.ws_col;
}

}  // namespace gb10tune::platform
