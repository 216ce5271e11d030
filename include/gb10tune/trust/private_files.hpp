// The state directory and the files gb10tune reads back from it (launch record, pid files,
// calibration), believed only when trust::judge_private accepts them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::trust {

// Checks an existing state directory: kept when private, tightened (chmod go-rwx) when others
// may only read it; an Error (ExitCode::failed) naming it, its owner or mode and the fix when it
// is another user's, writable by others, a symlink or not a directory. An absent one is fine.
Status check_private_dir(const std::filesystem::path& dir);

// Creates `dir` (its parents as needed, itself 0700 whatever the umask) and checks it as
// check_private_dir does. An Error (ExitCode::failed) naming the directory.
Status ensure_private_dir(const std::filesystem::path& dir);

// Checks a state directory as check_private_dir does, and every entry in it too (files as
// read_private_file judges them, subdirectories as directories), so that a command believes none
// of them unless all pass. An Error (ExitCode::failed) naming the first one refused and the fix.
Status check_state_dir(const std::filesystem::path& dir);

// The state directory (platform::state_dir) after check_state_dir. An Error naming what was
// refused (ExitCode::failed), or the missing HOME (ExitCode::usage).
Expected<std::filesystem::path> private_state_dir(const platform::Environment& env);

// A file of the state directory, read without following a symlink: nullopt when it does not
// exist; tightened (chmod 600) when others may only read it; an Error (ExitCode::failed) naming
// the file, its owner or mode and the fix when it is another user's, writable by others, a
// symlink, not a regular file, or unreadable.
Expected<std::optional<std::string>> read_private_file(const std::filesystem::path& path);

}  // namespace gb10tune::trust
