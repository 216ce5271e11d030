#include "gb10tune/trust/path_rules.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace gb10tune::trust {
namespace {

using platform::ExecutableChain;
using platform::PathFacts;

const Caller kRoot{0, "root"};
const Caller kBob{1000, "bob"};

PathFacts dir_facts(const std::string& path, unsigned uid, unsigned permissions,
                    const std::string& owner = "") {
  return PathFacts{path, uid, S_IFDIR | permissions, owner};
}

PathFacts file_facts(const std::string& path, unsigned uid, unsigned permissions,
                     const std::string& owner = "") {
  return PathFacts{path, uid, S_IFREG | permissions, owner};
}

// /opt/llama/bin/llama-server, everything root's and 0755.
ExecutableChain root_install() {
  ExecutableChain chain;
  chain.given = "/opt/llama/bin/llama-server";
  chain.real = chain.given;
  chain.file = file_facts(chain.real, 0, 0755, "root");
  chain.dirs = {dir_facts("/opt/llama/bin", 0, 0755, "root"),
                dir_facts("/opt/llama", 0, 0755, "root"), dir_facts("/opt", 0, 0755, "root"),
                dir_facts("/", 0, 0755, "root")};
  return chain;
}

TEST(PathRules, RootsBinaryInRootsDirectoriesRunsForAnyone) {
  for (const Caller& caller : {kRoot, kBob}) {
    const BinaryVerdict verdict = judge_binary(root_install(), caller);
    EXPECT_TRUE(verdict.may_run) << verdict.problem;
    EXPECT_EQ(verdict.path, "/opt/llama/bin/llama-server");
  }
}

TEST(PathRules, TheCallersOwnBuildRuns) {
  ExecutableChain chain = root_install();
  chain.file.uid = 1000;
  chain.dirs[0].uid = 1000;
  chain.dirs[1].uid = 1000;
  EXPECT_TRUE(judge_binary(chain, kBob).may_run);
}

// The issue: `sudo gb10tune verify` ran a binary another user owns.
TEST(PathRules, AnotherUsersBinaryIsRefusedNamingTheOwnerAndTheFix) {
  ExecutableChain chain = root_install();
  chain.file = file_facts(chain.real, 1001, 0755, "alice");
  const BinaryVerdict as_root = judge_binary(chain, kRoot);
  EXPECT_FALSE(as_root.may_run);
  EXPECT_EQ(as_root.problem, "binary owned by alice (uid 1001), not by root");
  EXPECT_EQ(as_root.fix,
            "run gb10tune as alice (sudo -u alice gb10tune …), or, once you have checked the "
            "binary, make root its owner (chown root:root /opt/llama/bin/llama-server)");
  const BinaryVerdict as_bob = judge_binary(chain, kBob);
  EXPECT_FALSE(as_bob.may_run);
  EXPECT_EQ(as_bob.problem, "binary owned by alice (uid 1001), not by root or you (bob)");
  chain.file.owner = "";
  EXPECT_EQ(judge_binary(chain, kRoot).problem, "binary owned by uid 1001, not by root");
  EXPECT_NE(judge_binary(chain, kRoot).fix.find("run gb10tune as that user"), std::string::npos);
}

TEST(PathRules, ABinaryOthersMayWriteIsRefused) {
  for (const unsigned mode : {0775u, 0757u, 0777u}) {
    ExecutableChain chain = root_install();
    chain.file.mode = S_IFREG | mode;
    const BinaryVerdict verdict = judge_binary(chain, kRoot);
    EXPECT_FALSE(verdict.may_run) << std::oct << mode;
    EXPECT_EQ(verdict.fix, "run `chmod go-w /opt/llama/bin/llama-server`");
  }
  ExecutableChain chain = root_install();
  chain.file.mode = S_IFREG | 0775;
  EXPECT_EQ(judge_binary(chain, kRoot).problem, "binary writable by its group (mode 0775)");
  chain.file.mode = S_IFREG | 0777;
  EXPECT_EQ(judge_binary(chain, kRoot).problem,
            "binary writable by its group and others (mode 0777)");
}

TEST(PathRules, NotARegularFileIsRefused) {
  ExecutableChain chain = root_install();
  chain.file.mode = S_IFDIR | 0755;
  const BinaryVerdict verdict = judge_binary(chain, kRoot);
  EXPECT_FALSE(verdict.may_run);
  EXPECT_EQ(verdict.problem, "binary is not a regular file");
}

TEST(PathRules, ItsOwnDirectoryMayBeWrittenByNoOneElseEvenWithTheStickyBit) {
  ExecutableChain chain = root_install();
  chain.dirs[0].mode = S_IFDIR | 0770;
  BinaryVerdict verdict = judge_binary(chain, kRoot);
  EXPECT_FALSE(verdict.may_run);
  EXPECT_EQ(verdict.problem,
            "binary in /opt/llama/bin, a directory writable by its group (mode 0770)");
  EXPECT_EQ(verdict.fix, "run `chmod go-w /opt/llama/bin`, or use a llama.cpp build elsewhere");

  // /tmp/llama-server: others cannot replace the file, but they can put a library beside it.
  chain.dirs[0] = dir_facts("/tmp", 0, 01777, "root");
  verdict = judge_binary(chain, kRoot);
  EXPECT_FALSE(verdict.may_run);
  EXPECT_EQ(verdict.problem,
            "binary in /tmp, a directory writable by its group and others (mode 1777)");
  EXPECT_NE(verdict.fix.find("not a shared one like /tmp"), std::string::npos) << verdict.fix;
}

TEST(PathRules, ADirectoryAboveMayBeStickyButNotOpen) {
  ExecutableChain chain = root_install();
  chain.dirs[2] = dir_facts("/opt", 0, 01777, "root");  // like /tmp: others cannot rename llama
  EXPECT_TRUE(judge_binary(chain, kRoot).may_run);
  chain.dirs[2].mode = S_IFDIR | 0777;  // without the sticky bit they can
  const BinaryVerdict verdict = judge_binary(chain, kRoot);
  EXPECT_FALSE(verdict.may_run);
  EXPECT_EQ(verdict.problem,
            "binary under /opt, a directory writable by its group and others (mode 0777)");
  EXPECT_EQ(verdict.fix, "run `chmod go-w /opt`, or use a llama.cpp build elsewhere");
}

TEST(PathRules, ADirectoryOfAnotherUserIsRefused) {
  ExecutableChain chain = root_install();
  chain.dirs[1] = dir_facts("/opt/llama", 1001, 0755, "alice");
  const BinaryVerdict verdict = judge_binary(chain, kRoot);
  EXPECT_FALSE(verdict.may_run);
  EXPECT_EQ(verdict.problem,
            "binary under /opt/llama, a directory owned by alice (uid 1001), not by root");
  EXPECT_NE(verdict.fix.find("sudo -u alice"), std::string::npos) << verdict.fix;
  // A sticky directory of another user: its owner may rename anything in it.
  chain = root_install();
  chain.dirs[2] = dir_facts("/opt", 1001, 01777, "alice");
  EXPECT_FALSE(judge_binary(chain, kRoot).may_run);
}

TEST(PathRules, ADirectoryThatChangedWhileCheckedIsRefused) {
  ExecutableChain chain = root_install();
  chain.dirs[1].mode = S_IFLNK | 0777;
  EXPECT_FALSE(judge_binary(chain, kRoot).may_run);
  chain.dirs.clear();
  EXPECT_FALSE(judge_binary(chain, kRoot).may_run);
}

TEST(PathRules, TheMessageNamesThePathTheRealFileTheRiskAndTheFix) {
  ExecutableChain chain = root_install();
  chain.given = "/usr/local/bin/llama-server";
  chain.file = file_facts(chain.real, 1001, 0755, "alice");
  const std::string message = judge_binary(chain, kRoot).message(kRoot);
  EXPECT_EQ(message,
            "refusing to run /usr/local/bin/llama-server (/opt/llama/bin/llama-server): binary "
            "owned by alice (uid 1001), not by root. Whoever can change that file or directory "
            "could make gb10tune run their own code as root. Fix: run gb10tune as alice (sudo -u "
            "alice gb10tune …), or, once you have checked the binary, make root its owner (chown "
            "root:root /opt/llama/bin/llama-server)");
}

TEST(PathRules, PrivateStateIsKept) {
  EXPECT_EQ(judge_private(dir_facts("/s", 1000, 0700), true, kBob).action, PrivateAction::keep);
  EXPECT_EQ(judge_private(file_facts("/s/f", 1000, 0600), false, kBob).action, PrivateAction::keep);
  EXPECT_EQ(judge_private(file_facts("/s/f", 1000, 0400), false, kBob).action, PrivateAction::keep);
}

// State of an older version or made by hand, that others may read but not write.
TEST(PathRules, StateOthersMayOnlyReadIsTightened) {
  PrivateVerdict verdict = judge_private(dir_facts("/s", 1000, 0755), true, kBob);
  EXPECT_EQ(verdict.action, PrivateAction::tighten);
  EXPECT_EQ(verdict.mode, 0700u);
  verdict = judge_private(file_facts("/s/f", 1000, 0644), false, kBob);
  EXPECT_EQ(verdict.action, PrivateAction::tighten);
  EXPECT_EQ(verdict.mode, 0600u);
  verdict = judge_private(dir_facts("/s", 1000, 02751), true, kBob);  // setgid kept
  EXPECT_EQ(verdict.mode, 02700u);
}

TEST(PathRules, StateOthersMayWriteIsRefusedWithTheChmod) {
  PrivateVerdict verdict = judge_private(dir_facts("/s/gb10tune", 1000, 0770), true, kBob);
  EXPECT_EQ(verdict.action, PrivateAction::refuse);
  EXPECT_EQ(verdict.message,
            "the state directory /s/gb10tune is writable by its group (mode 0770): another user "
            "could plant the launch record whose pid `stop` signals and whose command `watch "
            "--restart` runs. Run `chmod 700 /s/gb10tune` (and check that every file in it is "
            "yours) and try again");
  verdict = judge_private(file_facts("/s/launch.json", 1000, 0666), false, kBob);
  EXPECT_EQ(verdict.action, PrivateAction::refuse);
  EXPECT_NE(verdict.message.find("/s/launch.json is writable by its group and others (mode "
                                 "0666)"),
            std::string::npos)
      << verdict.message;
  EXPECT_NE(verdict.message.find("Run `chmod 600 /s/launch.json` if its content is yours"),
            std::string::npos)
      << verdict.message;
  // Sticky does not help a state directory: others could still add files to it.
  EXPECT_EQ(judge_private(dir_facts("/s", 1000, 01777), true, kBob).action, PrivateAction::refuse);
}

TEST(PathRules, StateOfAnotherUserIsRefusedEvenForRoot) {
  PrivateVerdict verdict = judge_private(
      dir_facts("/home/alice/.local/state/gb10tune", 1001, 0700, "alice"), true, kRoot);
  EXPECT_EQ(verdict.action, PrivateAction::refuse);
  EXPECT_NE(verdict.message.find("is owned by alice (uid 1001), not by you (root)"),
            std::string::npos)
      << verdict.message;
  EXPECT_NE(verdict.message.find("set XDG_STATE_HOME"), std::string::npos) << verdict.message;
  verdict = judge_private(file_facts("/s/launch.json", 0, 0600, "root"), false, kBob);
  EXPECT_EQ(verdict.action, PrivateAction::refuse);
  EXPECT_NE(verdict.message.find("Remove it, or run gb10tune as its owner"), std::string::npos);
}

TEST(PathRules, StateThatIsALinkOrOfTheWrongTypeIsRefused) {
  EXPECT_EQ(judge_private(PathFacts{"/s", 1000, S_IFLNK | 0777, ""}, true, kBob).action,
            PrivateAction::refuse);
  EXPECT_EQ(judge_private(file_facts("/s", 1000, 0600), true, kBob).action, PrivateAction::refuse);
  const PrivateVerdict fifo =
      judge_private(PathFacts{"/s/f", 1000, S_IFIFO | 0600, ""}, false, kBob);
  EXPECT_EQ(fifo.action, PrivateAction::refuse);
  EXPECT_EQ(fifo.message, "/s/f is not a regular file; remove it and run again");
}

}  // namespace
}  // namespace gb10tune::trust
