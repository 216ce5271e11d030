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

Sysroot Sysroot::in_memory(std::string name, std::map<std::string, std::string> files) {
  Sysroot root{fs::path("(" + name + ")")};
  root.m_files = std::make_shared<const std::map<std::string, std::string>>(std::move(files));
  return root;
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
  if (m_files) {
    const auto it = m_files->find(std::string(path));
    if (it == m_files->end()) {
      return Error{
          fmt::format("cannot open {}: the description has no such file", on_disk.string())};
    }
    return it->second.substr(0, max_bytes);
  }
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
  if (m_files) {
    const std::string dir = std::string(path) + "/";
    const auto it = m_files->lower_bound(std::string(path));
    return it != m_files->end() && (it->first == path || it->first.starts_with(dir));
  }
  std::error_code ec;
  return fs::exists(fs::symlink_status(resolve(path), ec));
}

Expected<std::vector<std::string>> Sysroot::list_dir(std::string_view path) const {
  const fs::path on_disk = resolve(path);
  if (m_files) {
    return list_described(path);
  }
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

Expected<std::vector<std::string>> Sysroot::list_described(std::string_view path) const {
  const std::string dir = std::string(path) + "/";
  std::vector<std::string> names;
  for (auto it = m_files->lower_bound(dir); it != m_files->end() && it->first.starts_with(dir);
       ++it) {
    const std::string name =
        it->first.substr(dir.size(), it->first.find('/', dir.size()) - dir.size());
    if (names.empty() || names.back() != name) {
      names.push_back(name);
    }
  }
  if (names.empty()) {
    return Error{
        fmt::format("cannot list {}: the description has no such folder", resolve(path).string())};
  }
  return names;
}

}  // namespace gb10tune::platform
