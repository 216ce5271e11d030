// Reading a generated systemd unit back as systemd 252 reads it (systemd.syntax(7),
// systemd.service(5) "Command lines", systemd.unit(5) "Specifiers"): lines, sections and
// assignments with continuations and comments, specifiers, quoted words with C escapes, and
// an ExecStart= command line down to the argv systemd would run. Anything a generated unit
// must not contain (a specifier, a variable, a second command, a prefix, an unknown escape, a
// line that is not UTF-8) is reported as a problem. Also systemd-analyze's own view of a unit
// where the tool is installed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gb10tune::testing {

// One Key=Value assignment as systemd's parser sees it.
struct UnitAssignment {
  std::string section;  // "Service"
  std::string key;      // "ExecStart"
  std::string value;    // trimmed, continued lines joined
  int line = 0;         // where it starts
};

// A unit file read back: its assignments in order, and what systemd would not read as written.
struct UnitReading {
  std::vector<UnitAssignment> assignments;
  std::vector<std::string> problems;
  // The raw values of `key` in `section`, in order.
  std::vector<std::string> values(const std::string& section, const std::string& key) const;
};

// Splits `text` into lines (\n, \r\n, \r and NUL end a line, as in systemd's read_line),
// skips comments, joins a line ending in an odd number of backslashes with the next, and
// keeps `[Section]` headers and `Key=Value` lines.
UnitReading read_unit(std::string_view text);

// `value` with its specifiers expanded: "%%" is "%"; any other specifier is a problem.
std::string unit_specifiers_expanded(std::string_view value, std::vector<std::string>& problems);

// The words of `value`, unquoted as systemd's extract_first_word(EXTRACT_UNQUOTE |
// EXTRACT_CUNESCAPE) does: blanks separate words, '…' and "…" quote, C escapes (\n, \xNN,
// \NNN, \uNNNN, …) are decoded; an escape not in systemd's table is a problem unless its
// character is in `literal_escapes` (systemd's own dump writes "\$").
std::vector<std::string> unit_words(std::string_view value, std::vector<std::string>& problems,
                                    std::string_view literal_escapes = {});

// The argv an ExecStart= value makes systemd run (specifiers expanded, words unquoted, "$$"
// read as "$"); a lone ';' (a second command), a prefix on the program, a program systemd
// refuses, and any variable reference are problems.
std::vector<std::string> unit_exec_argv(std::string_view value, std::vector<std::string>& problems);

// The NAME=value assignments of an Environment= value.
std::vector<std::pair<std::string, std::string>> unit_environment(
    std::string_view value, std::vector<std::string>& problems);

// What `systemd-analyze verify` makes of a unit: it loads the unit (at debug log level it
// dumps it as loaded) and reports what it refuses.
struct AnalyzedUnit {
  std::vector<std::string> warnings;  // lines about the unit file: parse errors, refusals
  std::string description;
  std::vector<std::string> argv;         // the first ExecStart= command
  std::vector<std::string> environment;  // NAME=value
  std::string working_directory;
  std::string output;  // everything systemd-analyze printed
};

// Writes `text` to dir/`name` and runs `systemd-analyze verify` on it. nullopt with `why` set
// when systemd-analyze is not installed or cannot verify a plain unit on this machine.
std::optional<AnalyzedUnit> systemd_analyze(const std::filesystem::path& dir,
                                            const std::string& name, const std::string& text,
                                            std::string& why);

// Whether the tests that run systemd-analyze must run (GB10TUNE_REQUIRE_SYSTEMD=1, as CI sets
// it after installing systemd): then a missing or unusable systemd-analyze fails them instead
// of skipping them.
bool systemd_analyze_required();

}  // namespace gb10tune::testing
