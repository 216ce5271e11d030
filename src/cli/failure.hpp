// How a subcommand says that it failed: one paragraph on stderr and, when --json was given,
// one JSON document on stdout, so that a script reading stdout always gets one.
#pragma once

#include "context.hpp"

namespace gb10tune::cli {

// Prints `error` on stderr as "gb10tune COMMAND: message" (a message that already starts with
// "gb10tune " as it is) and, when ctx.json, the failure document of ctx.command on stdout:
// indented, or on one line when `one_line` (watch prints JSON Lines). Returns the exit code to
// end with: the error's, an interrupt mapped as after_interrupt does. Never fails.
ExitCode report_failure(Context& ctx, const Error& error, bool one_line = false);

// `code`, except that ExitCode::interrupted becomes the code of the signal that interrupted the
// last long job (130 for SIGINT, 143 for SIGTERM).
ExitCode after_interrupt(ExitCode code);

}  // namespace gb10tune::cli
