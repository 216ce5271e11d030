// Which options a given llama-server build accepts, read from its `--help` (K15: flags drift
// between builds, so nothing is assumed from a version number).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::server {

// One option as `--help` lists it: "-kvu,  --kv-unified, -no-kvu, --no-kv-unified".
struct FlagSpec {
  std::vector<std::string> names;           // positive spellings with dashes: "-c", "--ctx-size"
  std::vector<std::string> negative_names;  // "--no-mmap", "-no-kvu", "-nocb"; empty for most
  std::string value_hint;   // "N", "[on|off|auto]", "none,draft-mtp,…"; "" = switch
  std::string env;          // "LLAMA_ARG_CTX_SIZE"; "" when the option has none
  std::string description;  // the help text, lines joined with spaces

  // True when the option consumes the next argument.
  bool takes_value() const { return !value_hint.empty(); }
  // How many arguments follow the option: 0, 1, or 2 ("--lora-scaled FNAME SCALE").
  int value_count() const;
  // True for an option the build still lists but rejects ("the argument has been removed":
  // --draft-max since 2026); its description names the replacement.
  bool removed() const;
  // The last long positive spelling without dashes ("ctx-size"): the key settings are kept by.
  std::string key() const;
};

// The options of one build, with lookups by any spelling.
class ServerFlags {
 public:
  ServerFlags() = default;

  // Parses the text of `llama-server --help`. Never fails: lines that are not options are
  // skipped; an empty result means the text was not a llama-server help.
  static ServerFlags parse_help(std::string_view help_text);

  // The option spelled `name` ("-c", "--ctx-size", "--ctx_size", "--no-mmap"), nullptr when
  // this build does not accept it. Underscores in long names count as dashes (as llama.cpp).
  const FlagSpec* find(std::string_view name) const;
  // The option read from environment variable `env`, nullptr when none.
  const FlagSpec* find_by_env(std::string_view env) const;
  // The option a config.ini key names: a spelling without dashes ("ctx-size", "c",
  // "no-mmap") or an environment variable name, as llama.cpp's preset loader accepts.
  const FlagSpec* find_by_key(std::string_view key) const;
  // True when `name` is one of the option's negative spellings ("--no-kv-unified").
  static bool is_negative(const FlagSpec& spec, std::string_view name);

  // True when the option's value hint lists `value` among comma/pipe-separated choices
  // ("--spec-type" lists "draft-mtp"); true for free-form hints such as "N"; false for a
  // switch or a removed option.
  bool accepts_value(std::string_view name, std::string_view value) const;

  const std::vector<FlagSpec>& all() const { return m_flags; }
  bool empty() const { return m_flags.empty(); }

 private:
  std::vector<FlagSpec> m_flags;
};

// Runs `server_path --help` (argv, no shell, with the given timeout) and parses it. An Error
// (ExitCode::usage) naming the binary when it may not be run (trust::runnable_binary: another
// user's, or one others could replace), cannot be run, exits non-zero, or prints no options.
Expected<ServerFlags> read_server_flags(
    const std::string& server_path, std::chrono::milliseconds timeout = std::chrono::seconds(20));

}  // namespace gb10tune::server
