// Finding the llama-server binary to run.
#pragma once

#include <string>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// `name_or_path` as an absolute path: a name without '/' is looked up in $PATH, a relative
// path is made absolute. An Error (usage) when it does not exist or is not executable, saying
// how to build llama.cpp or where to point --llama-server.
Expected<std::string> resolve_server_binary(const std::string& name_or_path,
                                            const platform::Environment& env);

// What tells one llama-server build from another without running it: the binary's resolved
// path, size and modification time ("/opt/llama/bin/llama-server, 8123456 bytes, 2026-08-01T10:
// 00:00Z"). A rebuild changes it; `path` alone when the file cannot be examined.
std::string server_build_identity(const std::string& path);

// `path` with a leading "~/" replaced by $HOME (unchanged when HOME is unset).
std::string expand_home(const std::string& path, const platform::Environment& env);

}  // namespace gb10tune::launch
