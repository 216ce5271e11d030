// The llama-server build whose flag set a plan assumes when no binary is at hand (gb10tune plan):
// the --help of llama.cpp 2026-08, commit 3f545be, compiled in.
#pragma once

#include <string_view>

#include "gb10tune/server/server_flags.hpp"

namespace gb10tune::server {

// The build's name as plans print it.
inline constexpr std::string_view kAssumedBuildName = "llama.cpp 2026-08, commit 3f545be";

// The build's --help text (never empty).
std::string_view assumed_build_help();

// Its flags, parsed (ServerFlags::parse_help of the text above).
const ServerFlags& assumed_build_flags();

// The flags of the same commit built with -DGGML_RPC=ON: the above and --rpc (a head over RPC).
const ServerFlags& assumed_rpc_build_flags();

}  // namespace gb10tune::server
