// Writing the planned command for another supervisor, so that it runs exactly the same argv:
// a systemd unit, a llama-swap entry or a router preset (for bash: util/shell_quote.hpp).
#pragma once

#include <string>
#include <vector>

#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// What a systemd unit for the server needs.
struct SystemdUnit {
  std::vector<std::string> argv;
  std::vector<std::string> unset_env;  // UnsetEnvironment=
  std::string description;
  std::string working_directory;  // "" = none
};

// A complete user or system unit ([Unit], [Service], [Install]) running `unit.argv`, every
// field written by systemd's own rules (util/systemd_syntax.hpp). An Error (exit 2) naming the
// value when a field cannot carry it: a program systemd would refuse, a variable name that is
// not one, a working directory with a line break.
Expected<std::string> render_systemd_unit(const SystemdUnit& unit);

// What a llama-swap model entry for the server needs.
struct LlamaSwapEntry {
  std::string name;                    // the model's name in llama-swap (requests' "model")
  std::vector<std::string> argv;       // the planned command; its --port value becomes ${PORT}
  std::vector<std::string> unset_env;  // removed through `env -u` (llama-swap cannot unset)
  int ttl_seconds = 300;               // unloaded after this long idle
};

// A `models:` map with one entry for llama-swap's config.yaml: `cmd` (/usr/bin/env -u NAME…
// when there are names to unset, then the argv, shell-quoted, with --port ${PORT}), `ttl` and
// `checkEndpoint: /health`.
// Strings are YAML double-quoted.
std::string render_llama_swap_entry(const LlamaSwapEntry& entry);

// One INI section for llama-server's router mode (--models-preset): `[name]`, then each option
// of `argv` (argv[0] left out) as `key = value` with the key the option's long name without
// dashes (a switch: `key = true`; a negative switch: its `no-` name = true). --host and --port
// are left out: the router sets them. An Error naming an option `flags` does not know or a
// value holding a line break.
Expected<std::string> render_models_preset(const std::string& name,
                                           const std::vector<std::string>& argv,
                                           const server::ServerFlags& flags);

}  // namespace gb10tune::launch
