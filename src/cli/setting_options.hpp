// The options of launch's settings (--slots, --ctx-per-slot, --reserve, --llama-server, --mtp,
// …), bound from the settings' table; shared by launch and plan.
#pragma once

#include <CLI/CLI.hpp>

#include "gb10tune/launch/launch_request.hpp"

namespace gb10tune::cli {

// Adds an option for every setting with one, and its flags, to `sub`; each writes the value
// given into request.values under the setting's key. `request` must outlive the parse (it
// lives in the subcommand's options, which its Runner holds).
void add_setting_options(CLI::App& sub, launch::LaunchRequest& request);

}  // namespace gb10tune::cli
