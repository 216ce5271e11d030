// Internal to platform: the NULL-terminated char* arrays that posix_spawn and execve take.
#pragma once

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

}  // namespace gb10tune::platform::detail
