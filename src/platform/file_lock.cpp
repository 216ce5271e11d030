#include "gb10tune/platform/file_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace gb10tune::platform {

namespace {

// The pid a holder wrote into the lock file, when there is one.
std::optional<int> read_holder(int fd) {
  char buffer[32] = {};
  const ssize_t got = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (got <= 0) {
    return std::nullopt;
  }
  int pid = 0;
  const auto [ptr, ec] = std::from_chars(buffer, buffer + got, pid);
  if (ec != std::errc() || pid <= 0) {
    return std::nullopt;
  }
  return pid;
}

}  // namespace

Expected<std::variant<FileLock, FileLock::Busy>> FileLock::try_acquire(
    const std::filesystem::path& path) {
  // A holder may remove the file between our open and our flock (remove_and_release): then the
  // lock we got is on a file nobody else can find, and we try again on the new one.
  for (int attempt = 0; attempt < 10; ++attempt) {
    Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) {
      const int saved = errno;
      return Error{fmt::format("cannot open the lock file {}: {}{}", path.string(),
                               std::strerror(saved),
                               saved == ELOOP ? " (it is a symlink; remove it)" : "")};
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      const int saved = errno;
      if (saved == EWOULDBLOCK) {
        return std::variant<FileLock, Busy>(Busy{read_holder(fd.get())});
      }
      return Error{fmt::format("cannot lock {}: {}", path.string(), std::strerror(saved))};
    }
    struct stat held {};
    struct stat named {};
    if (::fstat(fd.get(), &held) != 0 || ::lstat(path.c_str(), &named) != 0 ||
        held.st_ino != named.st_ino || held.st_dev != named.st_dev) {
      continue;
    }
    if (!S_ISREG(held.st_mode)) {
      return Error{fmt::format("the lock file {} is not a regular file; remove it", path.string())};
    }
    const std::string pid = fmt::format("{}\n", ::getpid());
    if (::ftruncate(fd.get(), 0) != 0 ||
        ::pwrite(fd.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      // Holding the lock is what matters; the pid is only for messages.
    }
    return std::variant<FileLock, Busy>(FileLock(path, std::move(fd)));
  }
  return Error{fmt::format("cannot lock {}: it keeps being replaced", path.string())};
}

void FileLock::remove_and_release() {
  if (m_fd.valid()) {
    ::unlink(m_path.c_str());
  }
  m_fd.close();
}

}  // namespace gb10tune::platform
