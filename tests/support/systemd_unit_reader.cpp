#include "support/systemd_unit_reader.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "gb10tune/platform/process.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::testing {

namespace {

constexpr std::string_view kBlanks = " \t\n\r";

bool is_blank(char c) {
  return kBlanks.find(c) != std::string_view::npos;
}

std::string utf8_of(std::uint32_t code) {
  std::string out;
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
  return out;
}

// `count` digits of `base` at text[at]; nullopt when they are not all there.
std::optional<std::uint32_t> digits_at(std::string_view text, std::size_t at, std::size_t count,
                                       int base) {
  if (at + count > text.size()) {
    return std::nullopt;
  }
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const char c = text[at + i];
    int digit = -1;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    }
    if (digit < 0 || digit >= base) {
      return std::nullopt;
    }
    value = value * static_cast<std::uint32_t>(base) + static_cast<std::uint32_t>(digit);
  }
  return value;
}

// Decodes the escape at text[at] (a backslash) as systemd's cunescape_one does, appends what it
// stands for to `out` and returns the index after it.
std::size_t decode_escape(std::string_view text, std::size_t at, std::string& out,
                          std::vector<std::string>& problems, std::string_view literal_escapes) {
  if (at + 1 >= text.size()) {
    problems.push_back(fmt::format("a backslash ends {:?}", text));
    return text.size();
  }
  const char c = text[at + 1];
  constexpr std::string_view kNamed = "abfnrtv";
  constexpr std::string_view kNamedValues = "\a\b\f\n\r\t\v";
  if (const auto named = kNamed.find(c); named != std::string_view::npos) {
    out += kNamedValues[named];
    return at + 2;
  }
  if (c == '\\' || c == '"' || c == '\'') {
    out += c;
    return at + 2;
  }
  if (c == 's') {
    out += ' ';
    return at + 2;
  }
  if (literal_escapes.find(c) != std::string_view::npos) {
    out += c;
    return at + 2;
  }
  struct Numeric {
    char marker;
    std::size_t skip;
    std::size_t digits;
    int base;
    bool code_point;
  };
  const Numeric numeric[] = {{'x', 2, 2, 16, false}, {'u', 2, 4, 16, true}, {'U', 2, 8, 16, true}};
  for (const Numeric& n : numeric) {
    if (c == n.marker) {
      const auto value = digits_at(text, at + n.skip, n.digits, n.base);
      if (!value || *value == 0) {
        problems.push_back(fmt::format("bad \\{} escape in {:?}", c, text));
        return at + 2;
      }
      out += n.code_point ? utf8_of(*value) : std::string(1, static_cast<char>(*value));
      return at + n.skip + n.digits;
    }
  }
  if (c >= '0' && c <= '7') {
    const auto value = digits_at(text, at + 1, 3, 8);
    if (!value || *value == 0 || *value > 255) {
      problems.push_back(fmt::format("bad octal escape in {:?}", text));
      return at + 2;
    }
    out += static_cast<char>(*value);
    return at + 4;
  }
  problems.push_back(fmt::format("unknown escape \\{} in {:?}", c, text));
  out += '\\';
  out += c;
  return at + 2;
}

// One word of `text` from `at` (blanks before it skipped), as extract_first_word does;
// nullopt at the end of the text.
std::optional<std::string> next_word(std::string_view text, std::size_t& at,
                                     std::vector<std::string>& problems,
                                     std::string_view literal_escapes) {
  while (at < text.size() && is_blank(text[at])) {
    ++at;
  }
  if (at >= text.size()) {
    return std::nullopt;
  }
  std::string word;
  char quote = 0;
  while (at < text.size()) {
    const char c = text[at];
    if (quote == 0 && is_blank(c)) {
      break;
    }
    if (c == '\\') {
      at = decode_escape(text, at, word, problems, literal_escapes);
    } else if (quote != 0 && c == quote) {
      quote = 0;
      ++at;
    } else if (quote == 0 && (c == '"' || c == '\'')) {
      quote = c;
      ++at;
    } else {
      word += c;
      ++at;
    }
  }
  if (quote != 0) {
    problems.push_back(fmt::format("unterminated quote in {:?}", text));
  }
  return word;
}

// A word of a command line after systemd's variable expansion at exec time: "$$" is "$";
// a reference to a variable ($NAME as a whole word, ${NAME} anywhere, a lone '$') is a problem.
std::string word_variables_expanded(const std::string& word, std::vector<std::string>& problems) {
  std::string out;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word[i] != '$') {
      out += word[i];
      continue;
    }
    if (i + 1 < word.size() && word[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    problems.push_back(fmt::format("the word {:?} refers to a variable", word));
    out += '$';
  }
  return out;
}

bool string_is_safe(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '"' || c == '\'' || c == '\\') {
      return false;
    }
  }
  return true;
}

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = lead < 0x80             ? 1
                         : (lead & 0xE0) == 0xC0 ? 2
                         : (lead & 0xF0) == 0xE0 ? 3
                         : (lead & 0xF8) == 0xF0 ? 4
                                                 : 0;
    if (length == 0 || i + length > text.size()) {
      return false;
    }
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) {
        return false;
      }
    }
    i += length;
  }
  return true;
}

}  // namespace

std::vector<std::string> UnitReading::values(const std::string& section,
                                             const std::string& key) const {
  std::vector<std::string> out;
  for (const UnitAssignment& a : assignments) {
    if (a.section == section && a.key == key) {
      out.push_back(a.value);
    }
  }
  return out;
}

UnitReading read_unit(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = start;
    while (end < text.size() && text[end] != '\n' && text[end] != '\r' && text[end] != '\0') {
      ++end;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + ((end + 1 < text.size() && text[end] == '\r' && text[end + 1] == '\n') ? 2 : 1);
  }
  UnitReading reading;
  std::string section;
  std::string pending;
  int pending_line = 0;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string_view raw = lines[n];
    const std::string_view lead = raw.substr(std::min(raw.find_first_not_of(kBlanks), raw.size()));
    if (!lead.empty() && (lead.front() == '#' || lead.front() == ';')) {
      continue;
    }
    if (!valid_utf8(raw)) {
      reading.problems.push_back(fmt::format("line {} is not UTF-8; systemd ignores it", n + 1));
    }
    if (pending.empty()) {
      pending_line = static_cast<int>(n) + 1;
    }
    std::string line = pending + std::string(raw);
    pending.clear();
    bool escaped = false;
    for (const char c : line) {
      escaped = !escaped && c == '\\';
    }
    if (escaped) {
      line.back() = ' ';
      pending = line;
      continue;
    }
    const std::string_view logical = trim(line);
    if (logical.empty()) {
      continue;
    }
    if (logical.front() == '[' && logical.back() == ']') {
      section = std::string(logical.substr(1, logical.size() - 2));
      continue;
    }
    const std::size_t eq = logical.find('=');
    if (eq == std::string_view::npos) {
      reading.problems.push_back(
          fmt::format("line {} is not an assignment: {:?}", pending_line, std::string(logical)));
      continue;
    }
    reading.assignments.push_back({section, std::string(trim(logical.substr(0, eq))),
                                   std::string(trim(logical.substr(eq + 1))), pending_line});
  }
  if (!pending.empty()) {
    reading.problems.push_back("the file ends in a continued line");
  }
  return reading;
}

std::string unit_specifiers_expanded(std::string_view value, std::vector<std::string>& problems) {
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '%') {
      out += value[i];
    } else if (i + 1 < value.size() && value[i + 1] == '%') {
      out += '%';
      ++i;
    } else {
      problems.push_back(fmt::format("a specifier in {:?}", value));
    }
  }
  return out;
}

std::vector<std::string> unit_words(std::string_view value, std::vector<std::string>& problems,
                                    std::string_view literal_escapes) {
  std::vector<std::string> words;
  std::size_t at = 0;
  while (auto word = next_word(value, at, problems, literal_escapes)) {
    words.push_back(std::move(*word));
  }
  return words;
}

std::vector<std::string> unit_exec_argv(std::string_view value,
                                        std::vector<std::string>& problems) {
  const std::string line = unit_specifiers_expanded(value, problems);
  std::vector<std::string> argv;
  std::size_t at = 0;
  for (;;) {
    while (at < line.size() && is_blank(line[at])) {
      ++at;
    }
    const auto ends_word = [&](std::size_t i) { return i >= line.size() || is_blank(line[i]); };
    if (at < line.size() && line[at] == ';' && ends_word(at + 1)) {
      problems.push_back(fmt::format("a lone ';' starts a second command in {:?}", line));
      break;
    }
    std::optional<std::string> word;
    if (at + 1 < line.size() && line[at] == '\\' && line[at + 1] == ';' && ends_word(at + 2)) {
      word = ";";
      at += 2;
    } else {
      word = next_word(line, at, problems, {});
    }
    if (!word) {
      break;
    }
    argv.push_back(std::move(*word));
  }
  if (argv.empty()) {
    problems.push_back("ExecStart= holds no command");
    return argv;
  }
  const std::string& program = argv.front();
  if (!program.empty() && std::string_view("@-:+!|").find(program.front()) != std::string::npos) {
    problems.push_back(fmt::format("the program {:?} starts with a prefix", program));
  }
  if (!string_is_safe(program)) {
    problems.push_back(fmt::format("the program {:?} has special characters", program));
  }
  if (program.find('$') != std::string::npos) {
    problems.push_back(fmt::format("the program {:?} holds a '$'", program));
  }
  for (std::size_t i = 1; i < argv.size(); ++i) {
    argv[i] = word_variables_expanded(argv[i], problems);
  }
  return argv;
}

std::vector<std::pair<std::string, std::string>> unit_environment(
    std::string_view value, std::vector<std::string>& problems) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& word : unit_words(unit_specifiers_expanded(value, problems), problems)) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) {
      problems.push_back(fmt::format("{:?} is not an assignment", word));
      continue;
    }
    out.emplace_back(word.substr(0, eq), word.substr(eq + 1));
  }
  return out;
}

namespace {

// Runs `systemd-analyze verify` on dir/name at debug level.
std::optional<platform::CapturedRun> run_verify(const std::filesystem::path& dir,
                                                const std::string& name, const std::string& text,
                                                std::string& why) {
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  const auto run = platform::run_capture(
      {"env", "SYSTEMD_LOG_LEVEL=debug", "systemd-analyze", "verify", path.string()},
      std::chrono::seconds(60), 8 << 20);
  if (!run) {
    why = run.error().message;
    return std::nullopt;
  }
  return *run;
}

// The fields of the dump of unit `name` in systemd-analyze's debug output ("Key: value" lines
// indented by tabs; a line without a tab continues the value before it).
std::vector<std::pair<std::string, std::string>> dump_fields(const std::string& output,
                                                             const std::string& name) {
  std::vector<std::pair<std::string, std::string>> fields;
  const std::string marker = "-> Unit " + name + ":";
  bool inside = false;
  for (const std::string_view line : split(output, '\n')) {
    if (!inside) {
      inside = trim(line) == marker;
      continue;
    }
    if (line.rfind("\t-> Unit ", 0) == 0) {
      break;
    }
    if (line.empty() || line.front() != '\t') {
      if (!fields.empty()) {
        fields.back().second += "\n" + std::string(line);
      }
      continue;
    }
    const std::string_view field = line.substr(line.find_first_not_of('\t'));
    const std::size_t colon = field.find(": ");
    if (colon != std::string_view::npos) {
      fields.emplace_back(std::string(field.substr(0, colon)),
                          std::string(field.substr(colon + 2)));
    }
  }
  return fields;
}

}  // namespace

bool systemd_analyze_required() {
  const char* value = std::getenv("GB10TUNE_REQUIRE_SYSTEMD");
  return value != nullptr && std::string_view(value) == "1";
}

std::optional<AnalyzedUnit> systemd_analyze(const std::filesystem::path& dir,
                                            const std::string& name, const std::string& text,
                                            std::string& why) {
  const auto version =
      platform::run_capture({"systemd-analyze", "--version"}, std::chrono::seconds(30));
  if (!version || version->exit_status != 0) {
    why = "systemd-analyze is not installed";
    return std::nullopt;
  }
  // A plain unit first: a machine where even that does not verify cannot judge ours.
  const std::string plain_name = "gb10tune-plain-check.service";
  const auto plain = run_verify(
      dir, plain_name, "[Unit]\nDescription=plain\n[Service]\nExecStart=/bin/sh -c true\n", why);
  if (!plain || plain->exit_status != 0 || dump_fields(plain->output, plain_name).empty()) {
    why = "systemd-analyze cannot verify a plain unit on this machine: " +
          (plain ? plain->output.substr(0, 400) : why);
    return std::nullopt;
  }
  const auto run = run_verify(dir, name, text, why);
  if (!run) {
    return std::nullopt;
  }
  AnalyzedUnit unit;
  unit.output = run->output;
  if (run->exit_status != 0) {
    unit.warnings.push_back(fmt::format("systemd-analyze verify exited {}", run->exit_status));
  }
  const std::string path = (dir / name).string();
  for (const std::string_view line : split(run->output, '\n')) {
    const bool about_file = line.find(path + ":") != std::string_view::npos &&
                            line.find("unit_file_build_name_map") == std::string_view::npos;
    const bool about_unit =
        line.rfind(name + ": ", 0) == 0 && line.find(" job") == std::string_view::npos;
    if (about_file || about_unit) {
      unit.warnings.emplace_back(line);
    }
  }
  for (const auto& [key, value] : dump_fields(run->output, name)) {
    if (key == "Description") {
      unit.description = value;
    } else if (key == "Environment") {
      unit.environment.push_back(value);
    } else if (key == "WorkingDirectory") {
      unit.working_directory = value;
    } else if (key == "Command Line" && unit.argv.empty()) {
      // The dump quotes each word for a shell ("\$" for '$') and shows "$$" not yet expanded.
      std::vector<std::string> problems;
      unit.argv = unit_words(value, problems, "$`");
      for (std::size_t i = 1; i < unit.argv.size(); ++i) {
        unit.argv[i] = word_variables_expanded(unit.argv[i], problems);
      }
      for (const std::string& problem : problems) {
        unit.warnings.push_back("reading the dumped command line: " + problem);
      }
    }
  }
  return unit;
}

}  // namespace gb10tune::testing
