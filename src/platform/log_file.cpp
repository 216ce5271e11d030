#include "gb10tune/platform/log_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace gb10tune::platform {

Expected<Fd> open_log_for_append(const std::filesystem::path& path) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    const int saved = errno;
    return Error{fmt::format("cannot open the server log {}: {}{}", path.string(),
                             std::strerror(saved),
                             saved == ELOOP ? " (it is a symlink; remove it)" : "")};
  }
  return fd;
}

std::uint64_t append_text(const Fd& log, std::string_view text) {
  const off_t at = ::lseek(log.get(), 0, SEEK_END);
  // One write: with O_APPEND the whole text lands at the end, between two of the server's.
  while (!text.empty()) {
    const ssize_t n = ::write(log.get(), text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return static_cast<std::uint64_t>(std::max<off_t>(0, at));
}

bool append_line(const std::filesystem::path& path, std::string_view line) {
  const auto log = open_log_for_append(path);
  if (!log) {
    return false;
  }
  append_text(*log, std::string(line) + "\n");
  return true;
}

}  // namespace gb10tune::platform
