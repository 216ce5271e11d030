// The "Exit codes:" footer of a command's --help, written from the list of codes it returns.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "gb10tune/util/exit_code.hpp"

namespace gb10tune::cli {

// One exit code a command returns and what it means there; an empty meaning is the tool-wide
// one (exit_code_meaning).
struct ExitMeaning {
  ExitCode code;
  std::string_view meaning = {};
};

// "Exit codes: 0 …, 2 usage error, 130 interrupted (SIGINT)." for `codes`, in their order.
std::string exit_code_footer(std::initializer_list<ExitMeaning> codes);

}  // namespace gb10tune::cli
