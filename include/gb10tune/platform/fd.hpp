// An owned file descriptor, and the few operations on one that the core needs (reading a
// file at an offset, appending to a log).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// Owns a file descriptor and closes it on destruction. Movable, not copyable; -1 is "none".
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(Fd&& other) noexcept;
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const { return m_fd; }
  bool valid() const { return m_fd >= 0; }
  // Closes the descriptor now (a no-op without one); false when close(2) reports an error,
  // which for a written file means the data may not have reached it.
  bool close();

 private:
  int m_fd = -1;
};

// The facts of an open file that a reader needs (fstat(2)).
struct OpenFileFacts {
  bool regular = false;  // a regular file, not a directory, device or pipe
  std::uint64_t size = 0;
};

// Opens `path` for reading, close-on-exec. An Error holding the system's reason
// ("No such file or directory"), for the caller to name the file.
Expected<Fd> open_read_only(const std::filesystem::path& path);

// Whether the file `fd` refers to is a regular one, and its size; an Error holding the
// system's reason.
Expected<OpenFileFacts> open_file_facts(const Fd& fd);

// Reads up to `count` bytes at `offset` into `out` (pread(2), retried when interrupted): how
// many were read, 0 at the end of the file. An Error holding the system's reason.
Expected<std::size_t> read_at(const Fd& fd, std::uint64_t offset, void* out, std::size_t count);

}  // namespace gb10tune::platform
