#include "gb10tune/platform/file_facts.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "gb10tune/platform/fd.hpp"

namespace gb10tune::platform {

namespace fs = std::filesystem;

namespace {

// What the kernel appends to the target of a /proc/<pid>/exe link whose file was deleted.
constexpr std::string_view kDeletedMark = " (deleted)";

PathFacts facts_of(std::string path, const struct stat& st) {
  return PathFacts{std::move(path), st.st_uid, st.st_mode, user_name(st.st_uid)};
}

Error errno_error(std::string_view what, const std::string& path, int error) {
  return Error{fmt::format("cannot {} {}: {}", what, path, std::strerror(error)), ExitCode::usage};
}

// realpath(3) of `path`; nullopt (errno set) when it cannot be resolved.
std::optional<std::string> real_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    return std::nullopt;
  }
  return std::string(buffer);
}

// The directory a deleted executable was in, or its nearest parent that still exists, with
// symlinks resolved. nullopt when `link` is not a link to a deleted file.
std::optional<std::string> deleted_file_dir(const std::string& link) {
  std::error_code ec;
  const std::string target = fs::read_symlink(link, ec).string();
  if (ec || target.size() <= kDeletedMark.size() ||
      std::string_view(target).substr(target.size() - kDeletedMark.size()) != kDeletedMark) {
    return std::nullopt;
  }
  for (fs::path dir = fs::path(target).parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (auto real = real_path(dir.string())) {
      return real;
    }
    if (dir == dir.root_path()) {
      break;
    }
  }
  return std::nullopt;
}

}  // namespace

bool PathFacts::is_directory() const {
  return S_ISDIR(mode);
}

bool PathFacts::is_regular() const {
  return S_ISREG(mode);
}

bool PathFacts::is_symlink() const {
  return S_ISLNK(mode);
}

unsigned effective_uid() {
  return ::geteuid();
}

std::string user_name(unsigned uid) {
  const long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::string buffer(hint > 0 ? static_cast<std::size_t>(hint) : 16384, '\0');
  struct passwd entry {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return {};
  }
  return found->pw_name;
}

Expected<std::optional<PathFacts>> lstat_path(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return std::optional<PathFacts>();
    }
    return errno_error("examine", path.string(), errno);
  }
  return std::optional<PathFacts>(facts_of(path.string(), st));
}

Expected<std::vector<PathFacts>> list_directory(const fs::path& dir) {
  std::vector<PathFacts> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    const fs::path& path = it->path();
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) {
        continue;  // removed meanwhile (a temp file renamed into place)
      }
      return Error{fmt::format("cannot examine {}: {}", path.string(), std::strerror(errno))};
    }
    entries.push_back(facts_of(path.string(), st));
  }
  if (ec) {
    return Error{fmt::format("cannot list {}: {}", dir.string(), ec.message())};
  }
  return entries;
}

Expected<ExecutableChain> inspect_executable(const std::string& path) {
  ExecutableChain chain;
  chain.given = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return errno_error("examine", path, errno);
  }
  std::string dir;
  auto real = real_path(path);
  const int resolve_error = errno;
  if (real) {
    chain.real = std::move(*real);
    // The resolved path has no symlink left: lstat describes the very file stat reached.
    if (::lstat(chain.real.c_str(), &st) != 0) {
      return errno_error("examine", chain.real, errno);
    }
    dir = fs::path(chain.real).parent_path().string();
  } else if (auto former = deleted_file_dir(path)) {
    chain.real = path;  // only the link still reaches the file; stat above followed it
    dir = std::move(*former);
  } else {
    return errno_error("resolve", path, resolve_error);
  }
  chain.file = facts_of(chain.real, st);
  for (fs::path at(dir);; at = at.parent_path()) {
    struct stat dir_st {};
    if (::lstat(at.c_str(), &dir_st) != 0) {
      return errno_error("examine", at.string(), errno);
    }
    chain.dirs.push_back(facts_of(at.string(), dir_st));
    if (at == at.root_path() || at.parent_path() == at) {
      break;
    }
  }
  return chain;
}

Expected<std::optional<FileRead>> read_file_nofollow(const fs::path& path, std::size_t max_bytes) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) {
    const int error = errno;
    if (error == ENOENT) {
      return std::optional<FileRead>();
    }
    if (error == ELOOP) {
      return Error{fmt::format("{} is a symlink, which gb10tune does not follow here; remove it",
                               path.string())};
    }
    return Error{fmt::format("cannot open {}: {}", path.string(), std::strerror(error))};
  }
  FileRead result;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    const int error = errno;
    return Error{fmt::format("cannot examine {}: {}", path.string(), std::strerror(error))};
  }
  result.facts = facts_of(path.string(), st);
  char buffer[8192];
  while (result.facts.is_regular() && result.content.size() < max_bytes) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      const int error = errno;
      return Error{fmt::format("cannot read {}: {}", path.string(), std::strerror(error))};
    }
    if (n == 0) {
      break;
    }
    result.content.append(buffer, static_cast<std::size_t>(n));
  }
  if (result.content.size() > max_bytes) {
    result.content.resize(max_bytes);
  }
  return std::optional<FileRead>(std::move(result));
}

bool is_executable_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<FileStamp> file_stamp(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  return FileStamp{static_cast<std::uint64_t>(st.st_size),
                   static_cast<std::int64_t>(st.st_mtim.tv_sec)};
}

Expected<fs::path> make_temp_dir(std::string_view prefix) {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec) {
    return Error{
        fmt::format("no temporary directory to create {}XXXXXX in ($TMPDIR, else /tmp): {}", prefix,
                    ec.message())};
  }
  std::string pattern = (base / fmt::format("{}XXXXXX", prefix)).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Error{fmt::format("cannot create {}: {}", pattern, std::strerror(errno))};
  }
  return fs::path(pattern);
}

Status set_mode(const fs::path& path, unsigned mode) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid() || ::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) {
    const int error = errno;
    return Error{fmt::format("cannot change the mode of {} to {:04o}: {}", path.string(), mode,
                             std::strerror(error))};
  }
  return {};
}

}  // namespace gb10tune::platform
