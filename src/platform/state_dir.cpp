#include "gb10tune/platform/state_dir.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gb10tune/platform/fd.hpp"
#include "gb10tune/platform/file_facts.hpp"

namespace gb10tune::platform {

namespace fs = std::filesystem;

namespace {

Expected<fs::path> xdg_dir(const Environment& env, const char* xdg_var, const char* home_suffix) {
  if (const auto xdg = env.get(xdg_var); xdg && !xdg->empty() && xdg->front() == '/') {
    return fs::path(*xdg) / "gb10tune";
  }
  if (const auto home = env.get("HOME"); home && !home->empty() && home->front() == '/') {
    return fs::path(*home) / home_suffix / "gb10tune";
  }
  return Error{
      fmt::format("neither {} nor HOME is set to an absolute path; set one of them", xdg_var),
      ExitCode::usage};
}

}  // namespace

Expected<fs::path> state_dir(const Environment& env) {
  return xdg_dir(env, "XDG_STATE_HOME", ".local/state");
}

Expected<fs::path> config_dir(const Environment& env) {
  return xdg_dir(env, "XDG_CONFIG_HOME", ".config");
}

Expected<fs::path> cache_dir(const Environment& env) {
  return xdg_dir(env, "XDG_CACHE_HOME", ".cache");
}

Status make_private_dir(const fs::path& given) {
  // "outdir/" names outdir (its parent_path() would be outdir itself), "reports" has no parent
  // to create, "." exists.
  fs::path dir = given.lexically_normal();
  while (dir.has_relative_path() && !dir.has_filename()) {
    dir = dir.parent_path();
  }
  std::error_code ec;
  if (const fs::path parent = dir.parent_path(); !parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) {
      return Error{fmt::format("cannot create {}: {}", parent.string(), ec.message())};
    }
  }
  if (::mkdir(dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      return {};
    }
    return Error{fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno))};
  }
  // The umask may have taken bits away (0277 leaves 0500: a directory gb10tune cannot write).
  return set_mode(dir, 0700);
}

Status write_file_atomic(const fs::path& path, std::string_view content) {
  const fs::path temp =
      path.parent_path() / fmt::format(".{}.tmp.{}", path.filename().string(), ::getpid());
  Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return Error{fmt::format("cannot create {}: {}", temp.string(), std::strerror(errno))};
  }
  if (::fchmod(fd.get(), 0600) != 0) {  // 0600 whatever the umask took away
    const int saved = errno;
    ::unlink(temp.c_str());
    return Error{fmt::format("cannot set the mode of {}: {}", temp.string(), std::strerror(saved))};
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      const int saved = errno;
      ::unlink(temp.c_str());
      return Error{fmt::format("cannot write {}: {}", temp.string(), std::strerror(saved))};
    }
    written += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd.get()) == 0;
  const int sync_errno = errno;
  const bool closed = fd.close();
  if (!synced || !closed) {
    const int saved = synced ? errno : sync_errno;
    ::unlink(temp.c_str());
    return Error{fmt::format("cannot write {}: {}", temp.string(), std::strerror(saved))};
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    return Error{fmt::format("cannot replace {}: {}", path.string(), std::strerror(saved))};
  }
  return {};
}

}  // namespace gb10tune::platform
