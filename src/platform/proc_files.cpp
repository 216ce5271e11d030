#include "gb10tune/platform/proc_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "gb10tune/platform/fd.hpp"

namespace gb10tune::platform {

namespace {

constexpr std::array<std::pair<std::string_view, int>, 6> kErrnoNames{{
    {"EACCES", EACCES},
    {"EPERM", EPERM},
    {"ENOENT", ENOENT},
    {"ESRCH", ESRCH},
    {"EIO", EIO},
    {"ENOTDIR", ENOTDIR},
}};

// The error a captured tree records for `path` (see the header), 0 when none.
int recorded_error(const Sysroot& root, std::string_view path) {
  if (root.is_live()) {
    return 0;
  }
  const std::string marker = root.resolve(path).string() + ".errno";
  const Fd fd(::open(marker.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return 0;
  }
  char name[32] = {};
  const ssize_t got = ::read(fd.get(), name, sizeof(name) - 1);
  if (got <= 0) {
    return 0;
  }
  std::string_view text(name, static_cast<std::size_t>(got));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  return errno_from_name(text);
}

}  // namespace

int errno_from_name(std::string_view name) {
  for (const auto& [known, number] : kErrnoNames) {
    if (known == name) {
      return number;
    }
  }
  return 0;
}

RawRead read_raw(const Sysroot& root, std::string_view path, std::size_t max_bytes) {
  RawRead result;
  result.path = root.resolve(path).string();
  if (const int recorded = recorded_error(root, path); recorded != 0) {
    result.error = recorded;
    return result;
  }
  const Fd fd(::open(result.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    result.error = errno;
    return result;
  }
  char buffer[16384];
  while (result.content.size() < max_bytes) {
    const std::size_t want = std::min(sizeof(buffer), max_bytes - result.content.size());
    const ssize_t got = ::read(fd.get(), buffer, want);
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      result.error = errno;  // ESRCH here: the process exited after the open
      result.content.clear();
      break;
    }
    if (got == 0) {
      break;
    }
    result.content.append(buffer, static_cast<std::size_t>(got));
  }
  return result;
}

RawRead read_link_raw(const Sysroot& root, std::string_view path) {
  RawRead result;
  result.path = root.resolve(path).string();
  if (const int recorded = recorded_error(root, path); recorded != 0) {
    result.error = recorded;
    return result;
  }
  std::string target(4096, '\0');
  const ssize_t got = ::readlink(result.path.c_str(), target.data(), target.size());
  if (got < 0) {
    result.error = errno;
    return result;
  }
  target.resize(static_cast<std::size_t>(got));
  result.content = std::move(target);
  return result;
}

}  // namespace gb10tune::platform
