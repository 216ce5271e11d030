// Printing a command for bash, so that pasting it runs exactly the same argv: the one shell
// quoting of the tool (launch's command line, the log header of a start, rpc's worker command).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gb10tune {

// One word for bash: unchanged when it holds only safe characters (letters, digits and
// _-+=:,./@%), else single-quoted with embedded quotes written as '\''. The empty word becomes
// ''. Never fails.
std::string shell_quote(std::string_view word);

// The words joined with single spaces, each quoted by shell_quote.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace gb10tune
