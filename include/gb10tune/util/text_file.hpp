// Reading a whole (small) file into memory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace gb10tune {

// The whole content of `path`, read as bytes; nullopt when it cannot be opened. Callers name the
// file and the fix in their own error.
std::optional<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace gb10tune
