#include "gb10tune/platform/sysroot.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gb10tune/platform/fd.hpp"

namespace gb10tune::platform {

namespace fs = std::filesystem;

Sysroot::Sysroot(fs::path root) : m_root(std::move(root)) {
  m_live = m_root.empty() || m_root == "/";
  if (m_root.empty()) {
    m_root = "/";
  }
}

fs::path Sysroot::resolve(std::string_view path) const {
  if (m_live) {
    return fs::path(path);
  }
  std::string_view relative = path;
  while (!relative.empty() && relative.front() == '/') {
    relative.remove_prefix(1);
  }
  return m_root / fs::path(relative);
}

Expected<std::string> Sysroot::read_file(std::string_view path, std::size_t max_bytes) const {
  const fs::path on_disk = resolve(path);
  const auto fd = open_read_only(on_disk);
  if (!fd) {
    return Error{fmt::format("cannot open {}: {}", on_disk.string(), fd.error().message)};
  }
  std::string content;
  char buffer[8192];
  while (content.size() < max_bytes) {
    const std::size_t want = std::min(sizeof(buffer), max_bytes - content.size());
    const ssize_t got = ::read(fd->get(), buffer, want);
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      return Error{fmt::format("cannot read {}: {}", on_disk.string(), std::strerror(errno))};
    }
    if (got == 0) {
      break;
    }
    content.append(buffer, static_cast<std::size_t>(got));
  }
  return content;
}

bool Sysroot::exists(std::string_view path) const {
  std::error_code ec;
  return fs::exists(fs::symlink_status(resolve(path), ec));
}

Expected<std::vector<std::string>> Sysroot::list_dir(std::string_view path) const {
  const fs::path on_disk = resolve(path);
  std::error_code ec;
  fs::directory_iterator it(on_disk, ec);
  if (ec) {
    return Error{fmt::format("cannot list {}: {}", on_disk.string(), ec.message())};
  }
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : it) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gb10tune::platform
