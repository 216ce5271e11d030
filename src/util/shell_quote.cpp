#include "gb10tune/util/shell_quote.hpp"

#include <algorithm>

namespace gb10tune {

namespace {

bool is_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_-+=:,./@%").find(c) != std::string_view::npos;
}

}  // namespace

std::string shell_quote(std::string_view word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), is_safe)) {
    return std::string(word);
  }
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& word : argv) {
    out += (out.empty() ? "" : " ") + shell_quote(word);
  }
  return out;
}

}  // namespace gb10tune
