// Copies of a binary that gb10tune must not run: one in a directory anyone may write, one owned
// by another user (the binary a user leaves for `sudo gb10tune verify` to run as root).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "support/test_context.hpp"

namespace gb10tune::testing {

// The uid the foreign copies are given (nobody on Debian and Ubuntu).
inline constexpr unsigned kForeignUid = 65534;

// `binary` copied (mode 0755) to dir/open/<its name>, dir/open being writable by everyone (mode
// 0777, no sticky bit). Any user can make one. Fails the test when the copy cannot be made.
std::filesystem::path copy_into_open_dir(const TempDir& dir, const std::filesystem::path& binary);

// A shell script at dir/open/<name> (dir/open as copy_into_open_dir makes it) that creates
// `marker` when it runs and then prints `output`: whether gb10tune ran it shows afterwards.
std::filesystem::path marker_script_in_open_dir(const TempDir& dir, const std::string& name,
                                                const std::filesystem::path& marker,
                                                const std::string& output = "");

// Gives `state_dir` mode 0770 (its group may write it: a state directory gb10tune must refuse)
// and returns the text of that refusal: "the state directory DIR is writable by its group (mode
// 0770)". Fails the test when the mode cannot be set.
std::string make_group_writable(const std::filesystem::path& state_dir);

// `binary` copied (mode 0755) to dir/foreign/<its name> and given to kForeignUid; nullopt when
// this process may not give files away (it is not root): the caller skips, saying so.
std::optional<std::filesystem::path> copy_owned_by_another_user(
    const TempDir& dir, const std::filesystem::path& binary);

}  // namespace gb10tune::testing
