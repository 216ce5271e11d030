// An advisory whole-file lock (flock) that says who holds it.
#pragma once

#include <filesystem>
#include <optional>
#include <utility>
#include <variant>

#include "gb10tune/platform/fd.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// An exclusive flock on a lock file that holds the holder's pid as text. Released when
// destroyed (or when the process ends, however it ends). Movable, not copyable.
class FileLock {
 public:
  // What try_acquire found.
  struct Busy {
    std::optional<int> holder;  // the pid written by the holder, when readable
  };

  // Takes the lock on `path` without waiting: the file is created 0600 if needed, never
  // through a symlink, and the descriptor is close-on-exec so that children do not keep it.
  // A FileLock, or Busy when another process holds it; an Error naming the path for anything
  // else (a symlink, a directory, no permission).
  static Expected<std::variant<FileLock, Busy>> try_acquire(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept = default;
  FileLock& operator=(FileLock&& other) noexcept = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() = default;  // closing the only descriptor releases the flock

  const std::filesystem::path& path() const { return m_path; }
  // Removes the lock file while still holding the lock (so that no one can hold a lock on
  // the removed file while another locks a new one), then releases it.
  void remove_and_release();

 private:
  FileLock(std::filesystem::path path, Fd fd) : m_path(std::move(path)), m_fd(std::move(fd)) {}
  std::filesystem::path m_path;
  Fd m_fd;
};

}  // namespace gb10tune::platform
