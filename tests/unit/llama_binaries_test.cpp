#include "gb10tune/probe/llama_binaries.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune::probe {
namespace {

using testing::TempDir;

// A stand-in llama-server that prints `text` on stderr (as llama.cpp does) and exits `rc`.
std::filesystem::path fake_server(const TempDir& dir, const std::string& relative,
                                  const std::string& text, int rc = 0) {
  const auto data = dir.write(relative + ".out", text);
  return dir.write(relative,
                   "#!/bin/sh\ncat '" + data.string() + "' >&2\nexit " + std::to_string(rc) + "\n",
                   true);
}

TEST(LlamaVersion, ParsesTheFixtureOutputs) {
  const LlamaVersion v2026 = parse_llama_version(
      testing::read_text(testing::fixture("llama-server/version-2026-08-commit-3f545be.txt")));
  EXPECT_EQ(v2026.version, "0.2.0-dev");
  EXPECT_EQ(v2026.build, "0");
  EXPECT_EQ(v2026.commit, "unknown");
  EXPECT_EQ(v2026.built_with, "GNU 12.2.0 for Linux x86_64");

  const LlamaVersion v2025 = parse_llama_version(
      testing::read_text(testing::fixture("llama-server/version-2025-02-commit-c392e50.txt")));
  EXPECT_EQ(v2025.version, "0");
  EXPECT_EQ(v2025.commit, "unknown");
  EXPECT_EQ(v2025.built_with, "cc (Debian 12.2.0-14+deb12u1) 12.2.0 for x86_64-linux-gnu");
}

TEST(LlamaVersion, ParsesTheLayoutOfRealReleaseBuilds) {
  const LlamaVersion v = parse_llama_version(
      "ggml_cuda_init: found 1 CUDA devices:\nversion 0.5.0-dev (build 11312), built with GNU "
      "13.3.0 for Linux aarch64\n");
  EXPECT_EQ(v.version, "0.5.0-dev");
  EXPECT_EQ(v.build, "11312");
  EXPECT_EQ(v.built_with, "GNU 13.3.0 for Linux aarch64");
  const LlamaVersion old = parse_llama_version("version: 6210 (3f545be1)\n");
  EXPECT_EQ(old.version, "6210");
  EXPECT_EQ(old.commit, "3f545be1");
  EXPECT_EQ(parse_llama_version("garbage\n").version, "");
}

TEST(LlamaServers, FindsPathAndBuildFoldersOnceEach) {
  TempDir dir;
  const std::string version = "version: 0.2.0-dev (build 7, commit abc)\nbuilt with GNU\n";
  fake_server(dir, "bin/llama-server", version);
  fake_server(dir, "home/llama.cpp/build/bin/llama-server", version);
  platform::Environment env;
  // bin listed twice: the same file must be reported once.
  env.set("PATH", (dir.path() / "bin").string() + "::" + (dir.path() / "bin").string());
  env.set("HOME", (dir.path() / "home").string());
  auto found = find_llama_servers(env, std::nullopt);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].source, "PATH");
  EXPECT_EQ(found[1].source, "build folder");
  query_versions(found);
  EXPECT_TRUE(found[0].runs) << found[0].error;
  EXPECT_EQ(found[0].version.build, "7");
  EXPECT_EQ(found[1].version.commit, "abc");
}

TEST(LlamaServers, ExplicitPathIsReportedEvenWhenMissing) {
  platform::Environment env;
  auto found = find_llama_servers(env, std::string("/nonexistent/llama-server"));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].runs);
  EXPECT_NE(found[0].error.find("not an executable file"), std::string::npos);
}

TEST(LlamaServers, FailingVersionIsReportedWithItsOutput) {
  TempDir dir;
  const auto path = fake_server(dir, "llama-server", "error while loading shared libraries", 127);
  platform::Environment env;
  auto found = find_llama_servers(env, path.string());
  query_versions(found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].runs);
  EXPECT_NE(found[0].error.find("exit 127"), std::string::npos) << found[0].error;
  EXPECT_NE(found[0].error.find("shared libraries"), std::string::npos);
}

// Issue 22 item 1: probe lists a binary others could replace but does not run its --version,
// and says why.
TEST(LlamaServers, BinaryOthersCouldReplaceIsListedButNotRun) {
  TempDir dir;
  const auto ran = dir.path() / "ran";
  const auto bin = testing::marker_script_in_open_dir(dir, "llama-server", ran, "version: 7 (abc)");
  platform::Environment env;
  env.set("PATH", bin.parent_path().string());
  auto found = find_llama_servers(env, std::nullopt);
  ASSERT_EQ(found.size(), 1u);
  query_versions(found);
  EXPECT_FALSE(found[0].runs);
  EXPECT_EQ(found[0].version.version, "");
  EXPECT_NE(found[0].error.find("not run: binary in " + bin.parent_path().string() +
                                ", a directory writable by its group and others (mode 0777)"),
            std::string::npos)
      << found[0].error;
  EXPECT_NE(found[0].error.find("chmod go-w"), std::string::npos) << found[0].error;
  EXPECT_FALSE(std::filesystem::exists(ran));
}

}  // namespace
}  // namespace gb10tune::probe
