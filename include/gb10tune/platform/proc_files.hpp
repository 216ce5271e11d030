// Raw reads of /proc/<pid> files that keep the OS error number, so that callers can tell
// "another user's process" (EACCES) from "the process is gone" (ENOENT, ESRCH).
//
// In a captured tree (a Sysroot that is not "/"), a file `NAME.errno` next to NAME, holding
// an errno name such as "EACCES", stands for a read of NAME that failed with that error. A
// capture made without root records unreadable files this way, and tests use it to exercise
// the permission-denied paths even when they run as root (root reads everything).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::platform {

// What one raw read produced: the content, or the errno and the on-disk path it concerns.
struct RawRead {
  std::string content;  // the file's bytes, or a symlink's target text
  int error = 0;        // 0 on success, else the errno of the failing call
  std::string path;     // the on-disk path (for messages)

  bool ok() const { return error == 0; }
};

// Reads up to `max_bytes` of `path` (an absolute machine path) under `root`.
RawRead read_raw(const Sysroot& root, std::string_view path, std::size_t max_bytes = 1 << 22);

// The target text of symlink `path` under `root`, without following it: in a captured tree
// the link's text is the machine path it pointed to, which need not exist on this host.
RawRead read_link_raw(const Sysroot& root, std::string_view path);

// "EACCES" → EACCES for the names a capture may record (EACCES, EPERM, ENOENT, ESRCH, EIO,
// ENOTDIR); 0 for anything else.
int errno_from_name(std::string_view name);

}  // namespace gb10tune::platform
