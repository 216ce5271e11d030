// Internal to platform: the NULL-terminated char* arrays that posix_spawn and execve take, and
// the check of a program's path before it is spawned.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace gb10tune::platform::detail {

// Pointers into `words` (which must outlive them), followed by a null pointer.
inline std::vector<char*> exec_words(const std::vector<std::string>& words) {
  std::vector<char*> out;
  out.reserve(words.size() + 1);
  for (const std::string& word : words) {
    out.push_back(const_cast<char*>(word.c_str()));
  }
  out.push_back(nullptr);
  return out;
}

// 0 when `path` names a file this process may execute, else the errno that says why not. POSIX
// lets posix_spawn report a program that cannot be run as a child that exits with 127 (as it
// does under an emulator such as qemu-user): checked first, the caller's error names the cause.
inline int executable_error(const std::string& path) {
  return ::access(path.c_str(), X_OK) == 0 ? 0 : errno;
}

}  // namespace gb10tune::platform::detail
