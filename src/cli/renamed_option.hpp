// Old spellings of renamed options: they keep working, --help no longer shows them, and a run
// that uses one says which name replaces it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "context.hpp"

namespace gb10tune::cli {

// An option kept under its old name only.
struct RenamedOption {
  const CLI::Option* option = nullptr;  // the hidden option of the old name
  std::string old_name;                 // "--timeout"
  std::string new_name;                 // "--grace"
};

// Hides `old_option` (which sets what `new_name` sets) from --help and adds it to `renamed`.
// Returns `old_option`.
CLI::Option* keep_renamed(CLI::Option* old_option, std::string new_name,
                          std::vector<RenamedOption>& renamed);

// One line on stderr for each old name given on this command line, naming its replacement.
void note_renamed(const std::vector<RenamedOption>& renamed, Context& ctx);

}  // namespace gb10tune::cli
