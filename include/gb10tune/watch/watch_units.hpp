// `gb10tune watch --print systemd`: a user unit that runs the watch beside the server, and a
// timer that runs `gb10tune verify` every few minutes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::watch {

// What the units need.
struct WatchUnitsInput {
  std::vector<std::string> watch_argv;   // the watch command (absolute gb10tune path first)
  std::vector<std::string> verify_argv;  // the verify command
  int verify_every_min = 15;
  // Variables the watch and verify must see as the caller did (XDG_STATE_HOME, say), so that
  // they find the launch record.
  std::vector<std::pair<std::string, std::string>> environment;
};

// The units of `self` (this gb10tune's path; "gb10tune" when unknown): `self watch --wait`
// with `watch_options` (those given, repeated in the unit), `self verify` every
// `verify_every_min` minutes, and XDG_STATE_HOME and XDG_CONFIG_HOME as `env` has them.
WatchUnitsInput watch_units_input(const std::optional<std::string>& self,
                                  const std::vector<std::string>& watch_options,
                                  int verify_every_min, const platform::Environment& env);

// One file to install under ~/.config/systemd/user/.
struct UnitFile {
  std::string name;  // "gb10tune-watch.service"
  std::string content;
};

// gb10tune-watch.service (Restart=on-failure, exit 130 on SIGTERM counts as success),
// gb10tune-verify.service (oneshot) and gb10tune-verify.timer (every verify_every_min), every
// field written by systemd's own rules. An Error (exit 2) naming the value when a command or
// a variable cannot be written into a unit (a gb10tune path systemd refuses, a value that is
// not UTF-8).
Expected<std::vector<UnitFile>> render_watch_units(const WatchUnitsInput& input);

// Creates `dir` (and its parents) for unit files (`--unit-dir`). A usage Error naming it.
Status create_unit_dir(const std::filesystem::path& dir);

// Writes `file` into `dir` atomically, readable by all and writable by its owner (0644, as
// systemd's own units), and returns its path. A usage Error naming the file.
Expected<std::filesystem::path> write_unit_file(const std::filesystem::path& dir,
                                                const UnitFile& file);

}  // namespace gb10tune::watch
