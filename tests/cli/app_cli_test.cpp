// Runs the real gb10tune binary: help, version, usage errors, and probe on a captured machine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_context.hpp"

namespace gb10tune {
namespace {

using testing::run_binary;

TEST(CliApp, HelpListsTheCommandsAndExitCodes) {
  const auto result = run_binary({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("probe"), std::string::npos);
  EXPECT_NE(result.out.find("Exit codes"), std::string::npos);
  EXPECT_EQ(result.out.find("--sysroot"), std::string::npos) << "--sysroot is hidden";
}

TEST(CliApp, SubcommandHelpReadsWell) {
  const auto result = run_binary({"probe", "--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("--json"), std::string::npos);
  EXPECT_NE(result.out.find("--llama-server"), std::string::npos);
}

TEST(CliApp, VersionPrintsNameAndVersion) {
  const auto result = run_binary({"--version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("gb10tune 0.1.0"), std::string::npos);
}

TEST(CliApp, UsageErrorsExitTwo) {
  EXPECT_EQ(run_binary({}).exit_code, 2);
  EXPECT_EQ(run_binary({"--bogus"}).exit_code, 2);
  EXPECT_EQ(run_binary({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_binary({"probe", "extra"}).exit_code, 2);
}

TEST(CliApp, ProbeRunsOnACapturedMachineWithoutAGpu) {
  const auto result = run_binary(
      {"--sysroot", testing::sysroot_fixture("gb10").string(), "probe", "--json", "--no-save"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  // stderr is interleaved into the capture; the document is the first '{' to the end.
  const auto doc = nlohmann::json::parse(result.out.substr(result.out.find('{')));
  EXPECT_EQ(doc["cpu"]["model"], "10x Cortex-A725 + 10x Cortex-X925");
}

}  // namespace
}  // namespace gb10tune
