// Values written into systemd unit files so that systemd reads back exactly the text given
// (systemd.syntax(7) "Quoting", systemd.service(5) "Command lines", systemd.exec(5)
// "Environment=", systemd.unit(5) "Specifiers"): no specifier (%) or variable ($) expanded, no
// line break, quote or ';' adding a directive, a word or a command. A value that a setting
// cannot carry unchanged is refused with an Error (exit 2) naming it and the fix, never
// altered silently; only free text for humans (Description=, comments) is cleaned.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::systemd {

// The value of an ExecStart= line (or any Exec*= line) that runs exactly `argv`: words joined
// by spaces, each double-quoted when it holds a blank, quote, backslash, ';', a control
// character or a byte that is not UTF-8 (those written as C escapes: \n, \t, \xNN), every '%'
// written "%%" and every '$' after the first word "$$". An Error when `argv` is empty or
// argv[0] is a program systemd refuses or would run differently: empty, neither absolute nor a
// bare name, ending in '/', starting with one of systemd's prefixes (@ - : + ! |), or holding
// a quote, backslash, '$', control character or byte that is not UTF-8.
Expected<std::string> exec_line(const std::vector<std::string>& argv);

// One Environment= assignment setting `name` to `value`: "NAME=value" in double quotes, with
// '\' and '"' escaped, control characters as C escapes and '%' doubled ('$' has no meaning
// there). An Error when `name` is not a variable name (letters, digits, '_', not starting
// with a digit) or `value` is not UTF-8 (systemd would drop the assignment).
Expected<std::string> environment_assignment(std::string_view name, std::string_view value);

// `name` as a word of UnsetEnvironment=: unchanged; an Error when it is not a variable name.
Expected<std::string> variable_name(std::string_view name);

// An absolute directory for WorkingDirectory= (and other path settings systemd does not
// unquote): '%' doubled, nothing else changed; blanks inside are fine. An Error when the
// path is not absolute, has a ".." component, or holds a control character (a line break
// cannot be written at all), a byte that is not UTF-8, or trailing blanks or a trailing
// backslash (systemd would strip the blanks, or join the next line).
Expected<std::string> directory_path(std::string_view path);

// Free text for Description=: one line (control characters, line breaks included, become
// spaces; bytes that are not UTF-8 become U+FFFD), trimmed, without trailing backslashes
// (they would join the next line), every '%' doubled. Never fails.
std::string description(std::string_view text);

// A comment line, "# " + `text` + "\n", with `text` on one line as for description() ('%' is
// not special in a comment).
std::string comment_line(std::string_view text);

}  // namespace gb10tune::systemd
