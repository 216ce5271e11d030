// The tool's name, version and the schema version of its JSON documents.
#pragma once

#include <string_view>

namespace gb10tune {

inline constexpr std::string_view kToolName = "gb10tune";
inline constexpr std::string_view kToolVersion = "0.1.0";
// Bumped whenever a field of a JSON document changes meaning or disappears.
inline constexpr int kSchemaVersion = 1;

}  // namespace gb10tune
