// Facts about files and directories, and a private temporary directory: who owns a file and who
// may write it (what the trust rules, trust/*.hpp, decide from), whether it may be executed, its
// size and age. Nothing here decides anything.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// One file or directory as stat(2) saw it.
struct PathFacts {
  std::string path;
  unsigned uid = 0;
  unsigned mode = 0;  // st_mode: the file type and the permission bits
  std::string owner;  // the user name of `uid`, "" when the user database has none

  bool is_directory() const;
  bool is_regular() const;
  bool is_symlink() const;
};

// Where an executable really is, and everything that decides who could replace it.
struct ExecutableChain {
  std::string given;            // the path as asked
  std::string real;             // absolute, every symlink resolved: the file to execute
  PathFacts file;               // the real file (for a /proc/<pid>/exe link: the linked file)
  std::vector<PathFacts> dirs;  // the file's directory first, then each parent up to "/"
};

// A small file read through a descriptor, with the facts of the file that descriptor opened.
struct FileRead {
  PathFacts facts;
  std::string content;  // empty unless facts.is_regular()
};

// When a file was last changed and how big it is (stat(2), symlinks followed).
struct FileStamp {
  std::uint64_t size = 0;
  std::int64_t modified_s = 0;  // seconds since the epoch
};

// The effective user id of this process (the one the kernel checks permissions with).
unsigned effective_uid();

// The user name of `uid` from the user database; "" when there is none.
std::string user_name(unsigned uid);

// lstat(2) of `path` (a final symlink is described, not followed); nullopt when it does not
// exist, an Error naming the path for any other failure.
Expected<std::optional<PathFacts>> lstat_path(const std::filesystem::path& path);

// lstat(2) of every entry of directory `dir` ("." and ".." left out), in no particular order. An
// Error naming the directory or the entry that cannot be read.
Expected<std::vector<PathFacts>> list_directory(const std::filesystem::path& dir);

// Resolves `path` (symlinks followed to the final file) and stats the file and every directory
// from its own up to "/". A /proc/<pid>/exe link to a file deleted since the process started is
// described as the link reaches it (the deleted file), with the directory it was in (or its
// nearest existing parent). An Error (ExitCode::usage) naming the path when it does not exist or
// cannot be examined.
Expected<ExecutableChain> inspect_executable(const std::string& path);

// Opens `path` without following a final symlink, stats what it opened and reads it (at most
// `max_bytes`) when it is a regular file. nullopt when it does not exist; an Error naming the
// path when it is a symlink or cannot be opened or read.
Expected<std::optional<FileRead>> read_file_nofollow(const std::filesystem::path& path,
                                                     std::size_t max_bytes);

// Whether `path` (symlinks followed) is a regular file that this process may execute
// (access(2) with X_OK). False for anything that does not exist or cannot be examined.
bool is_executable_file(const std::filesystem::path& path);

// The size and modification time of `path` (symlinks followed); nullopt when it cannot be
// examined.
std::optional<FileStamp> file_stamp(const std::filesystem::path& path);

// Creates a new directory `prefix` + "XXXXXX" (made unique) under the system's temporary
// directory ($TMPDIR, else /tmp), mode 0700 (mkdtemp(3)); the caller removes it. An Error
// saying why when there is no temporary directory or the new one cannot be created.
Expected<std::filesystem::path> make_temp_dir(std::string_view prefix);

// Sets the permission bits of `path` to `mode` without following a final symlink. An Error
// naming the path when it cannot.
Status set_mode(const std::filesystem::path& path, unsigned mode);

}  // namespace gb10tune::platform
