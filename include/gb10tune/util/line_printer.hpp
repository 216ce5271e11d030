// A status line for progress on stderr, in the manner of ninja's: on a terminal one line
// redrawn in place, elsewhere one plain line per update.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

namespace gb10tune {

// `text` cut to at most `width` columns (UTF-8 characters) by replacing its middle with "…";
// `text` itself when it fits or when `width` is 0 (unknown).
std::string elide_middle(std::string_view text, std::size_t width);

// Writes status lines to `out`. When `smart` (a terminal that understands "\x1b[K"), each
// status replaces the previous one: "\r", the line elided to `width` columns (0: unknown, no
// elision), "\x1b[K" to clear what is left of the longer previous line; no newline until
// finish(). Otherwise each status is printed whole on a line of its own. These are cursor
// controls, not colors: NO_COLOR leaves them on. Never fails; stream errors are the stream's.
class LinePrinter {
 public:
  LinePrinter(std::ostream& out, bool smart, std::size_t width)
      : m_out(out), m_smart(smart), m_width(width) {}
  LinePrinter(const LinePrinter&) = delete;
  LinePrinter& operator=(const LinePrinter&) = delete;
  // finish().
  ~LinePrinter() { finish(); }

  // Shows `line` as the current status.
  void status(std::string_view line);
  // Ends a status line left on a terminal with its newline; nothing otherwise.
  void finish();

  bool smart() const { return m_smart; }

 private:
  std::ostream& m_out;
  bool m_smart;
  std::size_t m_width;
  bool m_status_shown = false;  // a redrawn line waits for its newline
};

}  // namespace gb10tune
