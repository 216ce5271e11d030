// Whole-file reads (include/gb10tune/util/text_file.hpp).
#include "gb10tune/util/text_file.hpp"

#include <fstream>
#include <sstream>

namespace gb10tune {

std::optional<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

}  // namespace gb10tune
