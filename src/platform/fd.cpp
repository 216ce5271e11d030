#include "gb10tune/platform/fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace gb10tune::platform {

Fd::Fd(Fd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    close();
    m_fd = std::exchange(other.m_fd, -1);
  }
  return *this;
}

Fd::~Fd() {
  close();
}

bool Fd::close() {
  if (m_fd < 0) {
    return true;
  }
  const bool closed = ::close(m_fd) == 0;
  m_fd = -1;
  return closed;
}

Expected<Fd> open_read_only(const std::filesystem::path& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return Error{std::strerror(errno)};
  }
  return fd;
}

Expected<OpenFileFacts> open_file_facts(const Fd& fd) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Error{std::strerror(errno)};
  }
  return OpenFileFacts{S_ISREG(st.st_mode), static_cast<std::uint64_t>(st.st_size)};
}

Expected<std::size_t> read_at(const Fd& fd, std::uint64_t offset, void* out, std::size_t count) {
  while (true) {
    const ssize_t n = ::pread(fd.get(), out, count, static_cast<off_t>(offset));
    if (n >= 0) {
      return static_cast<std::size_t>(n);
    }
    if (errno != EINTR) {
      return Error{std::strerror(errno)};
    }
  }
}

}  // namespace gb10tune::platform
