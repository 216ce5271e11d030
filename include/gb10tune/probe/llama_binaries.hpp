// Finding the llama-server binaries on this machine and asking each for its version.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/platform/environment.hpp"

namespace gb10tune::probe {

// What `llama-server --version` printed, taken apart. Fields stay empty when absent.
struct LlamaVersion {
  std::string version;     // "0.2.0-dev", "6210", "0"
  std::string build;       // "11312"
  std::string commit;      // "3f545be", "unknown"
  std::string built_with;  // "GNU 12.2.0 for Linux x86_64"
};

// One candidate binary.
struct LlamaServerBinary {
  std::string path;
  std::string source;  // "--llama-server", "PATH", "build folder"
  bool runs = false;   // --version exited 0
  LlamaVersion version;
  std::string error;  // why it does not run / was not found ("" when it runs)
};

// Parses llama.cpp's `--version` output (both the old "version: N (hash)" layout and the
// newer "version: X (build N, commit H)" one).
LlamaVersion parse_llama_version(std::string_view output);

// The places searched, in order: `explicit_path` (reported even when missing), every PATH
// directory, then common build folders under $HOME and /opt. Duplicates (same file) are
// listed once.
std::vector<LlamaServerBinary> find_llama_servers(const platform::Environment& env,
                                                  const std::optional<std::string>& explicit_path);

// Runs `--version` on each found binary (10 s timeout each) and fills runs/version/error. A
// binary trust::check_binary refuses (another user's, or one others could replace) is not run:
// its error says "not run: " with the reason and the fix.
void query_versions(std::vector<LlamaServerBinary>& binaries);

}  // namespace gb10tune::probe
