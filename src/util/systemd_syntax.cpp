#include "gb10tune/util/systemd_syntax.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gb10tune::systemd {

namespace {

// Length (1 to 4) of the UTF-8 character starting at text[at], 0 when the bytes there are
// not one that systemd's utf8_is_valid() accepts (overlong forms, surrogates, code points
// past U+10FFFF and the non-characters are refused as systemd refuses them).
std::size_t utf8_length(std::string_view text, std::size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) {
    return 1;
  }
  std::size_t length = 0;
  char32_t code = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    code = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    code = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (at + length > text.size()) {
    return 0;
  }
  for (std::size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[at + i]);
    if ((next & 0xC0) != 0x80) {
      return 0;
    }
    code = (code << 6) | (next & 0x3F);
  }
  constexpr char32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  const bool valid = code >= kShortest[length] && code <= 0x10FFFF &&
                     !(code >= 0xD800 && code <= 0xDFFF) && !(code >= 0xFDD0 && code <= 0xFDEF) &&
                     (code & 0xFFFE) != 0xFFFE;
  return valid ? length : 0;
}

bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_length(text, i);
    if (length == 0) {
      return false;
    }
    i += length;
  }
  return true;
}

bool is_control(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

bool has_control(std::string_view text) {
  return std::any_of(text.begin(), text.end(), is_control);
}

// How text goes into a double-quoted word.
enum class Dollar { literal, doubled };

// `text` inside double quotes with systemd's C escapes: '\' and '"' escaped, control
// characters and bytes that are not UTF-8 as escapes, '%' doubled, '$' as `dollar` says.
// Without `always_quote` the quotes are left out when nothing in `text` needs them.
std::string quote(std::string_view text, Dollar dollar, bool always_quote) {
  std::string body;
  bool needs_quotes = always_quote || text.empty();
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_length(text, i);
    const char c = text[i];
    if (length == 0) {
      body += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      needs_quotes = true;
      ++i;
      continue;
    }
    if (length > 1) {
      body.append(text.substr(i, length));
      i += length;
      continue;
    }
    ++i;
    switch (c) {
      case '%':
        body += "%%";
        break;
      case '$':
        body += dollar == Dollar::doubled ? "$$" : "$";
        break;
      case '\\':
      case '"':
        body += '\\';
        body += c;
        needs_quotes = true;
        break;
      case '\n':
        body += "\\n";
        needs_quotes = true;
        break;
      case '\t':
        body += "\\t";
        needs_quotes = true;
        break;
      case '\r':
        body += "\\r";
        needs_quotes = true;
        break;
      default:
        if (is_control(c)) {
          body += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
          needs_quotes = true;
        } else {
          needs_quotes = needs_quotes || c == ' ' || c == '\'' || c == ';';
          body += c;
        }
    }
  }
  return needs_quotes ? "\"" + body + "\"" : body;
}

Error refused(std::string message) {
  return Error{std::move(message), ExitCode::usage};
}

// Why systemd would refuse `program` as the first word of ExecStart= or run it differently,
// or "" when it is fine.
std::string program_problem(std::string_view program) {
  if (program.empty()) {
    return "the program is empty";
  }
  if (std::string_view("@-:+!|").find(program.front()) != std::string_view::npos) {
    return fmt::format(
        "it starts with '{}', which systemd reads as a prefix of the command (@ - : + ! |); "
        "give the program's absolute path",
        program.front());
  }
  if (!is_utf8(program)) {
    return "its path is not UTF-8, which a unit file cannot hold; move or link the program to "
           "a UTF-8 path";
  }
  if (program.find_first_of("\"'\\") != std::string_view::npos || has_control(program)) {
    return "its path holds a quote, a backslash or a control character, which systemd refuses "
           "in the program of a command (\"Executable name contains special characters\"); "
           "move or link the program to a path without them";
  }
  if (program.find('$') != std::string_view::npos) {
    return "its path holds a '$': systemd runs the path as written but expands '$' in the "
           "program's own argv[0], so the two would differ; move or link the program to a path "
           "without '$'";
  }
  if (program.find('/') != std::string_view::npos && program.front() != '/') {
    return "it is a relative path, which systemd does not resolve; give its absolute path";
  }
  if (program.back() == '/' || program == "." || program == "..") {
    return "it names a directory, not a program; give the program's path";
  }
  return {};
}

bool is_variable_name(std::string_view name) {
  const auto word_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  return !name.empty() && !(name.front() >= '0' && name.front() <= '9') &&
         std::all_of(name.begin(), name.end(), word_char);
}

// `text` on one line for humans: control characters as spaces, bytes that are not UTF-8 as
// U+FFFD, trimmed, no trailing backslash; '%' doubled when `double_percent`.
std::string one_line(std::string_view text, bool double_percent) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    const char c = text[i];
    if (length == 1 && is_control(c)) {
      out += ' ';
    } else if (c == '%' && double_percent) {
      out += "%%";
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\\')) {
    out.pop_back();
  }
  const std::size_t first = out.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : out.substr(first);
}

}  // namespace

Expected<std::string> exec_line(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    return refused("a systemd unit needs a command for ExecStart=, and the command is empty");
  }
  if (const std::string problem = program_problem(argv.front()); !problem.empty()) {
    return refused(
        fmt::format("systemd cannot run {:?} from ExecStart=: {}", argv.front(), problem));
  }
  std::string line = quote(argv.front(), Dollar::literal, false);
  for (std::size_t i = 1; i < argv.size(); ++i) {
    line += ' ';
    line += quote(argv[i], Dollar::doubled, false);
  }
  return line;
}

Expected<std::string> environment_assignment(std::string_view name, std::string_view value) {
  if (!is_variable_name(name)) {
    return refused(
        fmt::format("{:?} is not a variable name systemd accepts in Environment= "
                    "(letters, digits and '_', not starting with a digit)",
                    name));
  }
  if (!is_utf8(value)) {
    return refused(
        fmt::format("the value of {} is not UTF-8, and systemd drops such an "
                    "Environment= assignment; set {} to a UTF-8 value",
                    name, name));
  }
  return quote(fmt::format("{}={}", name, value), Dollar::literal, true);
}

Expected<std::string> variable_name(std::string_view name) {
  if (!is_variable_name(name)) {
    return refused(
        fmt::format("{:?} is not a variable name systemd accepts in "
                    "UnsetEnvironment= (letters, digits and '_', not starting with "
                    "a digit)",
                    name));
  }
  return std::string(name);
}

Expected<std::string> directory_path(std::string_view path) {
  std::string problem;
  if (path.empty() || path.front() != '/') {
    problem = "it is not an absolute path";
  } else if (has_control(path)) {
    problem =
        "it holds a line break or another control character, which this setting "
        "cannot carry (systemd does not unquote it)";
  } else if (!is_utf8(path)) {
    problem = "it is not UTF-8, which a unit file cannot hold";
  } else if (path.back() == ' ' || path.back() == '\\') {
    problem =
        "it ends in a blank or a backslash, which systemd would strip or read as the "
        "start of a continued line";
  } else if (path == "/.." || path.find("/../") != std::string_view::npos ||
             path.ends_with("/..")) {
    problem = "it has a \"..\" component, which systemd refuses";
  }
  if (!problem.empty()) {
    return refused(
        fmt::format("{:?} cannot be written as a systemd directory setting: {}; use a "
                    "directory whose absolute path has no such characters",
                    path, problem));
  }
  std::string out;
  for (const char c : path) {
    out += c == '%' ? std::string("%%") : std::string(1, c);
  }
  return out;
}

std::string description(std::string_view text) {
  return one_line(text, true);
}

std::string comment_line(std::string_view text) {
  return "# " + one_line(text, false) + "\n";
}

}  // namespace gb10tune::systemd
