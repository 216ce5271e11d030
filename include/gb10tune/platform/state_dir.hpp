// Where gb10tune keeps its state (probe results, launch records, pid file, log), and how it
// writes files there safely.
#pragma once

#include <filesystem>
#include <string_view>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// $XDG_STATE_HOME/gb10tune, else $HOME/.local/state/gb10tune; an Error (ExitCode::usage) when
// neither variable is set to an absolute path. Nothing is checked: see trust/private_files.hpp.
Expected<std::filesystem::path> state_dir(const Environment& env);

// $XDG_CONFIG_HOME/gb10tune, else $HOME/.config/gb10tune; same failure rule.
Expected<std::filesystem::path> config_dir(const Environment& env);

// $XDG_CACHE_HOME/gb10tune, else $HOME/.cache/gb10tune; same failure rule.
Expected<std::filesystem::path> cache_dir(const Environment& env);

// Creates `dir` and its parents; `dir` itself, when this call creates it, gets mode 0700 exactly
// (whatever the umask). An existing one is left as it is: trust::ensure_private_dir judges it.
// An Error naming the directory that cannot be created.
Status make_private_dir(const std::filesystem::path& dir);

// Replaces `path` with `content` atomically (temp file in the same directory, fsync,
// rename); never follows a symlink at the temp name. Mode 0600 exactly, whatever the umask.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content);

}  // namespace gb10tune::platform
