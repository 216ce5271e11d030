// `gb10tune --version [--json]`: the build and NVML's loading result.
#pragma once

#include "context.hpp"

namespace gb10tune::cli {

// Prints the version report on ctx.out (text, or one JSON document when `json`); loads NVML
// through ctx.gpu when it has one. Always exit code ok: a missing NVML is a fact, not a failure.
ExitCode print_version(Context& ctx, bool json);

}  // namespace gb10tune::cli
