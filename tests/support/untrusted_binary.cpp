#include "support/untrusted_binary.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gb10tune::testing {

namespace fs = std::filesystem;

namespace {

// `binary` copied to dir/<folder>/<its name>, mode 0755.
fs::path copy_binary(const TempDir& dir, const std::string& folder, const fs::path& binary) {
  const fs::path target = dir.path() / folder / binary.filename();
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  fs::copy_file(binary, target, fs::copy_options::overwrite_existing, ec);
  EXPECT_FALSE(ec) << "cannot copy " << binary << " to " << target << ": " << ec.message();
  EXPECT_EQ(::chmod(target.c_str(), 0755), 0) << target;
  return target;
}

}  // namespace

fs::path copy_into_open_dir(const TempDir& dir, const fs::path& binary) {
  const fs::path copy = copy_binary(dir, "open", binary);
  EXPECT_EQ(::chmod(copy.parent_path().c_str(), 0777), 0) << copy.parent_path();
  return copy;
}

fs::path marker_script_in_open_dir(const TempDir& dir, const std::string& name,
                                   const fs::path& marker, const std::string& output) {
  const fs::path script = dir.write(
      "open/" + name, "#!/bin/sh\ntouch '" + marker.string() + "'\necho '" + output + "'\n", true);
  EXPECT_EQ(::chmod(script.parent_path().c_str(), 0777), 0) << script.parent_path();
  return script;
}

std::string make_group_writable(const fs::path& state_dir) {
  EXPECT_EQ(::chmod(state_dir.c_str(), 0770), 0) << state_dir;
  return "the state directory " + state_dir.string() + " is writable by its group (mode 0770)";
}

std::optional<fs::path> copy_owned_by_another_user(const TempDir& dir, const fs::path& binary) {
  if (::geteuid() != 0) {
    return std::nullopt;
  }
  const fs::path copy = copy_binary(dir, "foreign", binary);
  if (::chown(copy.c_str(), kForeignUid, kForeignUid) != 0) {
    ADD_FAILURE() << "root cannot chown " << copy;
    return std::nullopt;
  }
  return copy;
}

}  // namespace gb10tune::testing
