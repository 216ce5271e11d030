// The envelope every --json document shares, and the text styling rules (color only on a
// TTY, NO_COLOR respected).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gb10tune/platform/environment.hpp"

namespace gb10tune::render {

// {"schema_version": N, "tool": "gb10tune", "version": "…", "command": command}.
nlohmann::json make_document(std::string_view command);

// The document as indented text with a final newline; bytes that are not UTF-8 (from a
// hostile /proc file, say) are replaced, never thrown on.
std::string dump_document(const nlohmann::json& doc);

// The same on one line (JSON Lines), with a final newline.
std::string dump_document_line(const nlohmann::json& doc);

// Marks `doc` as a failure, in the shape verify's document has: "exit_code" (the process's)
// and "error" (the message saying what failed and how to fix it).
void add_failure(nlohmann::json& doc, int exit_code, std::string_view message);

// What a command prints with --json when it fails before it has anything else to say:
// make_document(command) with add_failure.
nlohmann::json failure_document(std::string_view command, int exit_code, std::string_view message);

// How text output may be decorated.
class TextStyle {
 public:
  // Color when `is_tty` and NO_COLOR is unset (any value, even empty, turns color off).
  static TextStyle for_stream(bool is_tty, const platform::Environment& env);
  // No decoration at all.
  static TextStyle plain() { return TextStyle(false); }

  bool color() const { return m_color; }
  std::string bold(std::string_view text) const;
  std::string green(std::string_view text) const;
  std::string yellow(std::string_view text) const;
  std::string red(std::string_view text) const;
  std::string dim(std::string_view text) const;

 private:
  explicit TextStyle(bool color) : m_color(color) {}
  std::string wrap(std::string_view code, std::string_view text) const;
  bool m_color;
};

}  // namespace gb10tune::render
