#include "exit_code_footer.hpp"

#include <fmt/format.h>

namespace gb10tune::cli {

std::string exit_code_footer(std::initializer_list<ExitMeaning> codes) {
  std::string out = "Exit codes:";
  const char* separator = " ";
  for (const ExitMeaning& entry : codes) {
    const std::string_view meaning =
        entry.meaning.empty() ? exit_code_meaning(entry.code) : entry.meaning;
    out += fmt::format("{}{} {}", separator, to_int(entry.code), meaning);
    separator = "; ";
  }
  return out + ".";
}

}  // namespace gb10tune::cli
