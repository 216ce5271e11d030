// The one gate every llama.cpp binary passes before gb10tune runs it (--help, --version, -lv 4,
// the server itself, the RPC worker): the file and every directory up to "/" examined on this
// machine and judged by trust::judge_binary.
#pragma once

#include <string>

#include "gb10tune/trust/path_rules.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::trust {

// Examines `path` and judges it for the current caller. An Error (ExitCode::usage) naming the
// path when it does not exist or cannot be examined; a verdict otherwise.
Expected<BinaryVerdict> check_binary(const std::string& path);

// The refusal of a binary that may not run, for the current caller: one paragraph naming it,
// its owner or mode and the fix (BinaryVerdict::message), ExitCode::usage.
Error refusal(const BinaryVerdict& verdict);

// The file to execute for `path` (its real path, symlinks resolved) when it may run; an Error
// (ExitCode::usage) otherwise, one paragraph naming the binary, its owner or mode and the fix.
Expected<std::string> runnable_binary(const std::string& path);

}  // namespace gb10tune::trust
