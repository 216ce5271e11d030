#include "gb10tune/util/strings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <charconv>
#include <cmath>

namespace gb10tune {

namespace {
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
}  // namespace

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && is_blank(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      fields.push_back(text.substr(start));
      return fields;
    }
    fields.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_blank(text[i])) {
      ++i;
    }
    const std::size_t start = i;
    while (i < text.size() && !is_blank(text[i])) {
      ++i;
    }
    if (i > start) {
      words.push_back(text.substr(start, i - start));
    }
  }
  return words;
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

namespace {
std::string format_scaled(std::uint64_t bytes, double step,
                          const std::array<const char*, 5>& units) {
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= step && unit + 1 < units.size()) {
    value /= step;
    ++unit;
  }
  if (unit == 0) {
    return fmt::format("{} {}", bytes, units[0]);
  }
  return fmt::format("{:.1f} {}", value, units[unit]);
}
}  // namespace

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

std::string format_bytes(std::uint64_t bytes) {
  return format_scaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB"});
}

std::string format_bytes_si(std::uint64_t bytes) {
  return format_scaled(bytes, 1000.0, {"B", "kB", "MB", "GB", "TB"});
}

}  // namespace gb10tune

namespace gb10tune {

std::string wrap_text(std::string_view text, std::size_t width, std::string_view indent) {
  std::string out;
  std::size_t column = 0;
  for (std::string_view word : split_words(text)) {
    if (column == 0) {
      out += indent;
      column = indent.size();
    } else if (column + 1 + word.size() > width) {
      out += '\n';
      out += indent;
      column = indent.size();
    } else {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out;
}

}  // namespace gb10tune

namespace gb10tune {

std::optional<std::uint64_t> parse_size(std::string_view text) {
  text = trim(text);
  std::size_t digits = 0;
  while (digits < text.size() &&
         ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) {
    ++digits;
  }
  if (digits == 0) {
    return std::nullopt;
  }
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, number);
  if (ec != std::errc() || end != text.data() + digits) {
    return std::nullopt;
  }
  const std::string_view unit = trim(text.substr(digits));
  struct Unit {
    std::string_view name;
    double factor;
  };
  constexpr Unit kUnits[] = {
      {"", 1},       {"B", 1},        {"K", 0x1p10},   {"KiB", 0x1p10}, {"KB", 1e3},
      {"M", 0x1p20}, {"MiB", 0x1p20}, {"MB", 1e6},     {"G", 0x1p30},   {"GiB", 0x1p30},
      {"GB", 1e9},   {"T", 0x1p40},   {"TiB", 0x1p40}, {"TB", 1e12},
  };
  for (const Unit& candidate : kUnits) {
    if (unit == candidate.name) {
      const double bytes = number * candidate.factor;
      if (!(bytes >= 1.0) || bytes >= 0x1p63) {
        return std::nullopt;
      }
      return static_cast<std::uint64_t>(bytes);
    }
  }
  return std::nullopt;
}

}  // namespace gb10tune

namespace gb10tune {

std::optional<std::uint64_t> parse_mib_figure(std::string_view text) {
  while (!text.empty() && text.front() == ' ') {
    text.remove_prefix(1);
  }
  std::size_t end = 0;
  while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) {
    ++end;
  }
  if (end == 0 || text.substr(end).find("MiB") == std::string_view::npos) {
    return std::nullopt;
  }
  double mib = 0;
  try {
    mib = std::stod(std::string(text.substr(0, end)));
  } catch (...) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(std::llround(mib * 1048576.0));
}

std::vector<BufferSizeLine> buffer_size_lines(std::string_view log_text) {
  constexpr std::string_view kSize = " buffer size = ";
  std::vector<BufferSizeLine> out;
  std::size_t start = 0;
  while (start < log_text.size()) {
    std::size_t end = log_text.find('\n', start);
    if (end == std::string_view::npos) {
      end = log_text.size();
    }
    const std::string_view line = log_text.substr(start, end - start);
    start = end + 1;
    const std::size_t at = line.find(kSize);
    if (at == std::string_view::npos) {
      continue;
    }
    if (const auto bytes = parse_mib_figure(line.substr(at + kSize.size()))) {
      out.push_back({line.substr(0, at), *bytes});
    }
  }
  return out;
}

std::string index_ranges(const std::vector<std::uint32_t>& indices) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) {
      ++j;
    }
    parts.push_back(i == j ? fmt::format("{}", indices[i])
                           : fmt::format("{}-{}", indices[i], indices[j]));
    i = j + 1;
  }
  return parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, ", "));
}

std::string format_duration(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) {
    return fmt::format("{} s", duration.count() / 1000);
  }
  return fmt::format("{} ms", duration.count());
}

}  // namespace gb10tune
