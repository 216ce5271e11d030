#include "gb10tune/util/line_printer.hpp"

#include <vector>

namespace gb10tune {

namespace {

// The byte offsets where the UTF-8 characters of `text` start.
std::vector<std::size_t> character_starts(std::string_view text) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      starts.push_back(i);
    }
  }
  return starts;
}

}  // namespace

std::string elide_middle(std::string_view text, std::size_t width) {
  const std::vector<std::size_t> starts = character_starts(text);
  if (width == 0 || starts.size() <= width) {
    return std::string(text);
  }
  if (width == 1) {
    return "…";
  }
  // Keep the head and the tail (the tail holds the figures that change), one "…" between.
  const std::size_t kept = width - 1;
  const std::size_t tail = kept / 2;
  const std::size_t head = kept - tail;
  const std::size_t head_end = starts[head];
  const std::size_t tail_start = starts[starts.size() - tail];
  return std::string(text.substr(0, head_end)) + "…" + std::string(text.substr(tail_start));
}

void LinePrinter::status(std::string_view line) {
  if (m_smart) {
    m_out << '\r' << elide_middle(line, m_width) << "\x1b[K";
    m_status_shown = true;
  } else {
    m_out << line << '\n';
  }
  m_out.flush();
}

void LinePrinter::finish() {
  if (m_status_shown) {
    m_out << '\n';
    m_out.flush();
    m_status_shown = false;
  }
}

}  // namespace gb10tune
