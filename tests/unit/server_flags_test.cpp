#include "gb10tune/server/server_flags.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune::server {
namespace {

ServerFlags help_of(const std::string& build) {
  return ServerFlags::parse_help(
      testing::read_text(testing::fixture("llama-server/help-" + build + ".txt")));
}

const std::string kNew = "2026-08-commit-3f545be";
const std::string kOld = "2025-02-commit-c392e50";

TEST(ServerFlags, ReadsNamesValueHintsAndEnvironmentVariables) {
  const auto flags = help_of(kNew);
  const auto* ctx = flags.find("-c");
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ctx, flags.find("--ctx-size"));
  EXPECT_EQ(ctx, flags.find("--ctx_size"));  // llama.cpp accepts underscores in long names
  EXPECT_EQ(ctx->value_hint, "N");
  EXPECT_EQ(ctx->env, "LLAMA_ARG_CTX_SIZE");
  EXPECT_EQ(ctx->key(), "ctx-size");
  EXPECT_EQ(ctx, flags.find_by_env("LLAMA_ARG_CTX_SIZE"));
  EXPECT_EQ(ctx, flags.find_by_key("ctx-size"));
  EXPECT_EQ(ctx, flags.find_by_key("c"));

  const auto* swa = flags.find("--swa-full");
  ASSERT_NE(swa, nullptr);
  EXPECT_FALSE(swa->takes_value());
  EXPECT_EQ(swa->env, "LLAMA_ARG_SWA_FULL");  // found after a wrapped description line
  EXPECT_EQ(flags.find("--no-such-option"), nullptr);
}

TEST(ServerFlags, TellsNegativeSpellingsApart) {
  const auto flags = help_of(kNew);
  const auto* kvu = flags.find("-kvu");
  ASSERT_NE(kvu, nullptr);
  EXPECT_EQ(kvu, flags.find("--no-kv-unified"));
  EXPECT_EQ(kvu->names, (std::vector<std::string>{"-kvu", "--kv-unified"}));
  EXPECT_EQ(kvu->negative_names, (std::vector<std::string>{"-no-kvu", "--no-kv-unified"}));
  EXPECT_EQ(kvu->env, "LLAMA_ARG_KV_UNIFIED");
  EXPECT_TRUE(ServerFlags::is_negative(*kvu, "-no-kvu"));
  EXPECT_FALSE(ServerFlags::is_negative(*kvu, "-kvu"));

  const auto* mmap = flags.find("--no-mmap");
  ASSERT_NE(mmap, nullptr);
  EXPECT_EQ(mmap->names, (std::vector<std::string>{"--mmap"}));
  const auto* dio = flags.find("-ndio");
  ASSERT_NE(dio, nullptr);
  EXPECT_TRUE(ServerFlags::is_negative(*dio, "-ndio"));
  const auto* repack = flags.find("-nr");
  ASSERT_NE(repack, nullptr);
  EXPECT_TRUE(ServerFlags::is_negative(*repack, "-nr"));
  // "-n" (predict) and "-np" start with n but negate nothing.
  EXPECT_FALSE(ServerFlags::is_negative(*flags.find("-n"), "-n"));
  EXPECT_FALSE(ServerFlags::is_negative(*flags.find("-np"), "-np"));
}

TEST(ServerFlags, OldBuildsSwitchesWithoutPositiveForm) {
  const auto flags = help_of(kOld);
  const auto* no_mmap = flags.find("--no-mmap");
  ASSERT_NE(no_mmap, nullptr);
  EXPECT_EQ(no_mmap->names, (std::vector<std::string>{"--no-mmap"}));
  EXPECT_TRUE(no_mmap->negative_names.empty());
  const auto* fa = flags.find("-fa");
  ASSERT_NE(fa, nullptr);
  EXPECT_FALSE(fa->takes_value());  // a plain switch in 2025-02
  EXPECT_EQ(flags.find("--spec-type"), nullptr);
  EXPECT_EQ(flags.find("-kvu"), nullptr);
  ASSERT_NE(flags.find("--draft-max"), nullptr);
  const auto* lora = flags.find("--lora-scaled");
  ASSERT_NE(lora, nullptr);
  EXPECT_EQ(lora->value_count(), 2);
}

TEST(ServerFlags, ValueChoicesComeFromTheHint) {
  const auto flags = help_of(kNew);
  EXPECT_TRUE(flags.accepts_value("--spec-type", "draft-mtp"));
  EXPECT_TRUE(flags.accepts_value("--spec-type", "draft-mtp,ngram-simple"));
  EXPECT_FALSE(flags.accepts_value("--spec-type", "draft-magic"));
  EXPECT_TRUE(flags.accepts_value("-fa", "on"));
  EXPECT_FALSE(flags.accepts_value("-fa", "yes"));
  EXPECT_TRUE(flags.accepts_value("-c", "589824"));
  EXPECT_FALSE(flags.accepts_value("--swa-full", "1"));   // a switch takes no value
  EXPECT_FALSE(flags.accepts_value("--draft-max", "4"));  // removed in this build
  ASSERT_NE(flags.find("--draft-max"), nullptr);
  EXPECT_TRUE(flags.find("--draft-max")->removed());
  EXPECT_FALSE(flags.find("--spec-draft-n-max")->removed());
}

TEST(ServerFlags, EveryOptionOfBothBuildsIsFound) {
  for (const auto& build : {kNew, kOld}) {
    const auto flags = help_of(build);
    EXPECT_GT(flags.all().size(), 140u) << build;
    for (const auto& spec : flags.all()) {
      for (const auto& name : spec.names) {
        EXPECT_TRUE(name.size() > 1 && name[0] == '-') << build << ": " << name;
        EXPECT_EQ(flags.find(name), &spec) << build << ": " << name;
      }
    }
  }
}

TEST(ServerFlags, TextThatIsNotAHelpGivesNoOptions) {
  EXPECT_TRUE(ServerFlags::parse_help("").empty());
  EXPECT_TRUE(ServerFlags::parse_help("usage: something else\n  no options here\n").empty());
}

TEST(ServerFlags, ReadsTheHelpOfABinary) {
  testing::TempDir dir;
  const auto help = testing::fixture("llama-server/help-" + kNew + ".txt");
  const auto good = dir.write("llama-server", "#!/bin/sh\ncat '" + help.string() + "'\n", true);
  const auto flags = read_server_flags(good.string());
  ASSERT_TRUE(flags) << flags.error().message;
  EXPECT_NE(flags->find("--spec-draft-n-max"), nullptr);

  const auto failing =
      dir.write("broken", "#!/bin/sh\necho 'libcuda.so: not found' >&2\nexit 127\n", true);
  const auto error = read_server_flags(failing.string());
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().message.find("exited with status 127"), std::string::npos);
  EXPECT_NE(error.error().message.find("libcuda.so"), std::string::npos);

  const auto other = dir.write("other", "#!/bin/sh\necho '-x, --xyz  nothing'\n", true);
  EXPECT_FALSE(read_server_flags(other.string()));
  EXPECT_FALSE(read_server_flags((dir.path() / "missing").string()));
}

// Issue 22 item 1: --help is never run on a binary others could replace (here: its directory is
// writable by everyone); the Error names it, why, and the fix.
TEST(ServerFlags, BinaryOthersCouldReplaceIsNotRun) {
  testing::TempDir dir;
  const auto ran = dir.path() / "ran";
  const auto bin = testing::marker_script_in_open_dir(dir, "llama-server", ran);
  const auto flags = read_server_flags(bin.string());
  ASSERT_FALSE(flags);
  EXPECT_EQ(flags.error().code, ExitCode::usage);
  EXPECT_NE(flags.error().message.find("refusing to run " + bin.string()), std::string::npos)
      << flags.error().message;
  EXPECT_NE(flags.error().message.find("chmod go-w " + bin.parent_path().string()),
            std::string::npos)
      << flags.error().message;
  EXPECT_FALSE(std::filesystem::exists(ran));
}

}  // namespace
}  // namespace gb10tune::server
