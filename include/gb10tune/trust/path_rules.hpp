// Which binaries gb10tune may run, and which of its own state it may believe: pure decisions over
// stat facts (platform/file_facts.hpp), so that a test reaches every branch without root.
#pragma once

#include <string>
#include <string_view>

#include "gb10tune/platform/file_facts.hpp"
#include "gb10tune/trust/caller.hpp"

namespace gb10tune::trust {

// Whether a binary may be run, and why not.
struct BinaryVerdict {
  bool may_run = false;
  std::string given;    // the path as asked
  std::string path;     // the file to execute: the real path, symlinks resolved
  std::string problem;  // why not, short: "binary owned by nobody (uid 65534), not by root"
  std::string fix;      // what would make it runnable, naming the file or directory

  // One paragraph for a refusal: the path, the problem, the risk and the fix.
  std::string message(const Caller& caller) const;
};

// A binary may run when the real file is a regular file owned by root or the caller and
// writable by no one else; its own directory is owned by root or the caller and writable by no
// one else, sticky or not (the libraries beside it are loaded too); and every directory above is
// owned by root or the caller and writable by no one else unless it is sticky (then no one else
// may rename what lies below it, which is itself checked). Never fails: a refusal says why.
BinaryVerdict judge_binary(const platform::ExecutableChain& chain, const Caller& caller);

// What to do with a state directory or a file gb10tune reads back from it.
enum class PrivateAction {
  keep,     // the caller's, and no one else may read or write it
  tighten,  // the caller's, readable by others but writable by no one else: set `mode`
  refuse,   // another user's, writable by others, a symlink, or of the wrong type
};

// The verdict on one state directory or state file.
struct PrivateVerdict {
  PrivateAction action = PrivateAction::refuse;
  unsigned mode = 0;    // tighten: the permission bits to set (group and others cleared)
  std::string message;  // refuse: one paragraph naming the path, its owner or mode, and the fix
};

// The state directory (`directory` true) and the files read back from it (launch record, pid
// file, calibration) must be the caller's with (mode & 077) == 0, as ssh asks of ~/.ssh: what
// they say is the pid that `stop` signals and the command that `watch --restart` runs. Access
// that only lets others read (0755, 0644) is tightened; anything else is refused.
PrivateVerdict judge_private(const platform::PathFacts& facts, bool directory,
                             const Caller& caller);

}  // namespace gb10tune::trust
