// Saving a command's JSON document in the state directory, where `gb10tune report` (and, for
// probe, launch and verify) read it back.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "context.hpp"

namespace gb10tune::cli {

// Writes `doc` as `file_name` in the state directory (created private if needed). With
// `announce`, says "<what> saved to PATH" on stderr. Never fails the command: a state directory
// that is not configured or not writable is a warning on stderr naming what was not saved.
void save_to_state(Context& ctx, std::string_view file_name, std::string_view what,
                   const nlohmann::json& doc, bool announce);

}  // namespace gb10tune::cli
