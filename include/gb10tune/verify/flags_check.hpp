// Check 3 of verify: the settings a llama-server process really runs with, from all four
// sources (K16), against the tuning rules and against the plan launch recorded.
#pragma once

#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/verify/verify.hpp"

namespace gb10tune::verify {

// Resolves the process's settings (system and user config.ini under `root`, LLAMA_ARG_* in
// its environment, its argv) with `flags` (the options its build accepts), checks them with
// server::check_rules, and reports any difference from `record` (when it describes this
// process) as a diff naming each setting's source. Also derives what /props should say and
// the URL from the effective --host/--port.
FlagsOutcome check_flags(const platform::Sysroot& root, const ProcessSnapshot& snapshot,
                         const server::ServerFlags& flags, const launch::LaunchRecord* record);

}  // namespace gb10tune::verify
