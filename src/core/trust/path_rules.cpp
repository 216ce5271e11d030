#include "gb10tune/trust/path_rules.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace gb10tune::trust {

namespace {

// Permission bits of a mode (st_mode), as std::filesystem names them (the POSIX values).
constexpr unsigned mode_bits(std::filesystem::perms perms) {
  return static_cast<unsigned>(perms);
}
constexpr unsigned kGroupWrite = mode_bits(std::filesystem::perms::group_write);
constexpr unsigned kOthersWrite = mode_bits(std::filesystem::perms::others_write);
constexpr unsigned kSticky = mode_bits(std::filesystem::perms::sticky_bit);
constexpr unsigned kGroupOrOthersWrite = kGroupWrite | kOthersWrite;

// "its group", "others", "its group and others": who besides the owner may write.
std::string writers(unsigned mode) {
  const bool group = (mode & kGroupWrite) != 0;
  const bool others = (mode & kOthersWrite) != 0;
  return group && others ? "its group and others" : group ? "its group" : "others";
}

std::string mode_text(unsigned mode) {
  return fmt::format("{:04o}", mode & 07777);
}

std::string owner_text(const platform::PathFacts& facts) {
  return describe_user(facts.uid, facts.owner);
}

// The owner's name for a command line, "that user" when the user database has none.
std::string owner_for_command(const platform::PathFacts& facts) {
  return facts.owner.empty() ? std::string("that user") : facts.owner;
}

// "you (bob)", "you (uid 1000)", "you (root)".
std::string caller_text(const Caller& caller) {
  return fmt::format("you ({})",
                     caller.name.empty() ? fmt::format("uid {}", caller.uid) : caller.name);
}

// "root" for root, "root or you (bob)" for anyone else: who may own what gb10tune runs.
std::string trusted_owners(const Caller& caller) {
  return caller.uid == 0 ? std::string("root") : "root or " + caller_text(caller);
}

bool trusted_owner(unsigned uid, const Caller& caller) {
  return uid == 0 || uid == caller.uid;
}

BinaryVerdict not_runnable(const platform::ExecutableChain& chain, std::string problem,
                           std::string fix) {
  BinaryVerdict verdict;
  verdict.given = chain.given;
  verdict.path = chain.real;
  verdict.problem = std::move(problem);
  verdict.fix = std::move(fix);
  return verdict;
}

// Why a directory of the chain makes the binary unsafe (a verdict with an empty problem when it
// does not); `own`: the binary's own directory.
BinaryVerdict judge_directory(const platform::ExecutableChain& chain,
                              const platform::PathFacts& dir, bool own, const Caller& caller) {
  const std::string where = own ? "in" : "under";
  if (!dir.is_directory()) {
    return not_runnable(
        chain, fmt::format("binary {} {}, which changed while it was checked", where, dir.path),
        "run gb10tune again");
  }
  if (!trusted_owner(dir.uid, caller)) {
    return not_runnable(
        chain,
        fmt::format("binary {} {}, a directory owned by {}, not by {}", where, dir.path,
                    owner_text(dir), trusted_owners(caller)),
        fmt::format("use a llama.cpp build in a directory that only root or you control, or run "
                    "gb10tune as {} (sudo -u {} gb10tune …)",
                    owner_for_command(dir), owner_for_command(dir)));
  }
  const bool writable = (dir.mode & kGroupOrOthersWrite) != 0;
  const bool sticky = (dir.mode & kSticky) != 0;
  if (writable && (own || !sticky)) {
    return not_runnable(
        chain,
        fmt::format("binary {} {}, a directory writable by {} (mode {})", where, dir.path,
                    writers(dir.mode), mode_text(dir.mode)),
        own && sticky
            ? fmt::format("move the binary, with the libraries beside it, to a directory "
                          "that only root or you can write (not a shared one like {})",
                          dir.path)
            : fmt::format("run `chmod go-w {}`, or use a llama.cpp build elsewhere", dir.path));
  }
  return {};
}

}  // namespace

std::string BinaryVerdict::message(const Caller& caller) const {
  const std::string real = path.empty() || path == given ? "" : fmt::format(" ({})", path);
  return fmt::format(
      "refusing to run {}{}: {}. Whoever can change that file or directory could make gb10tune "
      "run their own code as {}. Fix: {}",
      given, real, problem, describe_user(caller.uid, caller.name), fix);
}

BinaryVerdict judge_binary(const platform::ExecutableChain& chain, const Caller& caller) {
  const platform::PathFacts& file = chain.file;
  if (!file.is_regular()) {
    return not_runnable(
        chain, "binary is not a regular file",
        fmt::format("give the path of the llama.cpp binary itself, not {}", chain.real));
  }
  if (!trusted_owner(file.uid, caller)) {
    return not_runnable(
        chain,
        fmt::format("binary owned by {}, not by {}", owner_text(file), trusted_owners(caller)),
        fmt::format("run gb10tune as {} (sudo -u {} gb10tune …), or, once you have checked the "
                    "binary, make root its owner (chown root:root {})",
                    owner_for_command(file), owner_for_command(file), chain.real));
  }
  if ((file.mode & kGroupOrOthersWrite) != 0) {
    return not_runnable(
        chain,
        fmt::format("binary writable by {} (mode {})", writers(file.mode), mode_text(file.mode)),
        fmt::format("run `chmod go-w {}`", chain.real));
  }
  for (std::size_t i = 0; i < chain.dirs.size(); ++i) {
    BinaryVerdict verdict = judge_directory(chain, chain.dirs[i], i == 0, caller);
    if (!verdict.problem.empty()) {
      return verdict;
    }
  }
  if (chain.dirs.empty()) {
    return not_runnable(chain, "binary in a directory that could not be examined",
                        "run gb10tune again");
  }
  BinaryVerdict verdict;
  verdict.may_run = true;
  verdict.given = chain.given;
  verdict.path = chain.real;
  return verdict;
}

PrivateVerdict judge_private(const platform::PathFacts& facts, bool directory,
                             const Caller& caller) {
  PrivateVerdict verdict;
  const std::string name =
      directory ? fmt::format("the state directory {}", facts.path) : facts.path;
  const std::string chmod = fmt::format("chmod {} {}", directory ? "700" : "600", facts.path);
  if (facts.is_symlink()) {
    verdict.message = fmt::format(
        "{} is a symlink, which gb10tune does not follow for its state; remove the link and run "
        "again",
        name);
  } else if (directory ? !facts.is_directory() : !facts.is_regular()) {
    verdict.message = fmt::format("{} is not a {}; remove it and run again", name,
                                  directory ? "directory" : "regular file");
  } else if (facts.uid != caller.uid) {
    verdict.message = fmt::format(
        "{} is owned by {}, not by {}: gb10tune does not believe state another user could "
        "have written (a launch record names the pid that `stop` signals and the command that "
        "`watch --restart` runs). {}",
        name, owner_text(facts), caller_text(caller),
        directory ? "Use a state directory of your own (set XDG_STATE_HOME), or run gb10tune as "
                    "its owner"
                  : "Remove it, or run gb10tune as its owner");
  } else if ((facts.mode & kGroupOrOthersWrite) != 0) {
    verdict.message = fmt::format(
        "{} is writable by {} (mode {}): another user could plant the launch record whose pid "
        "`stop` signals and whose command `watch --restart` runs. Run `{}`{} and try again",
        name, writers(facts.mode), mode_text(facts.mode), chmod,
        directory ? " (and check that every file in it is yours)" : " if its content is yours");
  } else if ((facts.mode & 077) != 0) {
    verdict.action = PrivateAction::tighten;
    verdict.mode = facts.mode & 07700;
  } else {
    verdict.action = PrivateAction::keep;
  }
  return verdict;
}

}  // namespace gb10tune::trust
