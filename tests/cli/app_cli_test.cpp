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
  EXPECT_EQ(result.out.rfind("gb10tune 0.1.0", 0), 0U) << result.out;
  EXPECT_NE(result.out.find("\n  build type   "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\n  CUDA         "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\n  NVML         "), std::string::npos) << result.out;
}

TEST(CliApp, VersionAsJsonNamesTheBuildAndNvml) {
  const auto result = run_binary({"--version", "--json"});
  EXPECT_EQ(result.exit_code, 0);
  const auto doc = nlohmann::json::parse(result.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << result.out;
  EXPECT_EQ(doc["command"], "version");
  EXPECT_EQ(doc["build"]["project_version"], "0.1.0");
  EXPECT_TRUE(doc["build"]["cuda"].is_boolean());
  EXPECT_TRUE(doc["build"]["cuda_architectures"].is_array());
  EXPECT_TRUE(doc["nvml"]["loaded"].is_boolean());
  EXPECT_FALSE(doc["nvml"]["detail"].get<std::string>().empty());
  // The global --json means nothing without --version: a command is still required.
  EXPECT_EQ(run_binary({"--json"}).exit_code, 2);
  const auto misplaced = run_binary({"--json", "probe"});
  EXPECT_EQ(misplaced.exit_code, 2) << misplaced.out;
  EXPECT_NE(misplaced.out.find("put it after the command: gb10tune probe --json"),
            std::string::npos)
      << misplaced.out;
}

TEST(CliApp, UsageErrorsExitTwo) {
  EXPECT_EQ(run_binary({}).exit_code, 2);
  EXPECT_EQ(run_binary({"--bogus"}).exit_code, 2);
  EXPECT_EQ(run_binary({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_binary({"probe", "extra"}).exit_code, 2);
}

TEST(CliApp, EveryNumberOptionRefusesNonFiniteAndOutOfRangeValues) {
  // Each is a usage error naming the option, before anything runs: a cast of inf or nan to an
  // integer is undefined, and a huge or negative wait is never what was meant.
  testing::TempDir state;
  const std::string xdg = "XDG_STATE_HOME=" + state.path().string();
  const std::string no_bin = "/nonexistent/rpc-server";
  const std::string no_url = "http://127.0.0.1:1";
  struct Case {
    std::vector<std::string> args;
    std::string option;
  };
  const std::vector<Case> cases = {
      {{"rpc", "stop", "--grace", "inf"}, "--grace"},
      {{"rpc", "stop", "--grace", "nan"}, "--grace"},
      {{"rpc", "stop", "--grace", "-1"}, "--grace"},
      {{"rpc", "stop", "--grace", "1e300"}, "--grace"},
      {{"rpc", "stop", "--timeout", "inf"}, "--timeout"},  // the old spelling, hidden
      {{"rpc", "start", "--timeout", "nan", "--rpc-server", no_bin}, "--timeout"},
      {{"rpc", "start", "--threads", "-4", "--rpc-server", no_bin}, "--threads"},
      {{"rpc", "start", "--threads", "100000000", "--rpc-server", no_bin}, "--threads"},
      {{"stop", "--grace", "nan"}, "--grace"},
      {{"stop", "--grace", "inf"}, "--grace"},
      {{"stop", "--timeout", "nan"}, "--timeout"},  // the old spelling, hidden
      {{"watch", "--interval", "nan"}, "--interval"},
      {{"watch", "--grace", "nan"}, "--grace"},
      {{"watch", "--restart-delay", "inf"}, "--restart-delay"},
      {{"watch", "--restart-max-delay", "nan"}, "--restart-max-delay"},
      {{"bench", "--peak", "nan"}, "--peak"},
      {{"bench", "--peak", "inf"}, "--peak"},
      {{"bench", "--cuda-device", "-1"}, "--cuda-device"},
      {{"bench", "--device", "-1"}, "--device"},  // the old spelling, hidden
      {{"bench", "server", "--timeout", "inf", "--url", no_url}, "--timeout"},
      {{"bench", "server", "--timeout", "nan", "--url", no_url}, "--timeout"},
      {{"bench", "server", "--bandwidth", "nan", "--url", no_url}, "--bandwidth"},
      {{"bench", "server", "--bandwidth", "inf", "--url", no_url}, "--bandwidth"},
  };
  for (const Case& c : cases) {
    const auto result = run_binary(c.args, {xdg});
    std::string line;
    for (const auto& arg : c.args) {
      line += arg + " ";
    }
    EXPECT_EQ(result.exit_code, 2) << line << "\n" << result.out << result.err;
    EXPECT_NE((result.out + result.err).find(c.option), std::string::npos)
        << line << "\n"
        << result.out << result.err;
  }
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
