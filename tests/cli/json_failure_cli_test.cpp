// With --json every command prints one JSON document on stdout when it fails too: the envelope,
// the exit code and the error, with the same exit code as without --json.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/fake_bandwidth.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;

// Checks that `result` is a failure with `code` whose stdout is exactly one document of
// `command` with that code and a message; returns the document.
json expect_failure_document(const testing::CliResult& result, const std::string& command,
                             int code) {
  EXPECT_EQ(result.exit_code, code) << command << ": " << result.err;
  const json doc = json::parse(result.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << command << " printed no single JSON document:\n"
                                   << result.out << "\nstderr:\n"
                                   << result.err;
  if (doc.is_discarded()) {
    return nullptr;
  }
  EXPECT_EQ(doc.value("schema_version", 0), 1) << doc.dump();
  EXPECT_EQ(doc.value("tool", ""), "gb10tune") << doc.dump();
  EXPECT_FALSE(doc.value("version", "").empty()) << doc.dump();
  EXPECT_EQ(doc.value("command", ""), command) << doc.dump();
  EXPECT_EQ(doc.value("exit_code", -1), code) << doc.dump();
  EXPECT_TRUE(doc.contains("error") && doc["error"].is_string() &&
              !doc["error"].get<std::string>().empty())
      << doc.dump();
  return doc;
}

// `args` without their "--json".
std::vector<std::string> without_json(std::vector<std::string> args) {
  args.erase(std::remove(args.begin(), args.end(), "--json"), args.end());
  return args;
}

struct FailureCase {
  std::string scenario;
  std::vector<std::string> args;
  std::string command;
  int code;
  std::string error_says;
};

TEST(CliJsonFailure, EveryCommandPrintsOneDocumentWithTheSameExitCode) {
  testing::TempDir state;
  platform::Environment env;
  env.set("XDG_STATE_HOME", state.path().string());
  env.set("HOME", state.path().string());
  const std::string port = std::to_string(testing::free_tcp_port());
  for (const FailureCase& c : std::vector<FailureCase>{
           {"gb10", {"probe", "--json", "--no-save", "--reserve", "banana"}, "probe", 2, "banana"},
           {"no-gpu", {"bench", "--json"}, "bench", 4, "no GPU"},
           {"gb10", {"bench", "--json", "--size", "0"}, "bench", 2, "--size 0"},
           {"gb10", {"bench", "server", "--json"}, "bench server", 2, "--url"},
           {"gb10",
            {"bench", "server", "--json", "--url", "http://127.0.0.1:" + port, "--timeout", "2"},
            "bench server",
            1,
            "no llama-server answers"},
           {"gb10",
            {"bench", "compare", "--json", "nope-a", "nope-b"},
            "bench compare",
            2,
            "nope-a"},
           {"gb10",
            {"launch", "--json", "--dry-run", "--model", "/nonexistent/m.gguf"},
            "launch",
            2,
            "/nonexistent/m.gguf"},
           {"gb10",
            {"verify", "--json", "--server-help", "/nonexistent/help.txt"},
            "verify",
            2,
            "/nonexistent/help.txt"},
           {"gb10", {"rpc", "start", "--json", "--host", "0.0.0.0"}, "rpc start", 2, "--expose"},
           {"gb10", {"rpc", "status", "--json", "--port", port}, "rpc status", 1, port},
           // Usage errors found by the option parser.
           {"gb10", {"launch", "--json", "--bogus"}, "launch", 2, "--bogus"},
           {"gb10", {"rpc", "start", "--json", "--port", "0"}, "rpc start", 2, "--port"},
           {"gb10",
            {"bench", "server", "--json", "--samples", "0"},
            "bench server",
            2,
            "--samples"},
       }) {
    const auto with = testing::run_cli_on(c.scenario, c.args, env);
    const json doc = expect_failure_document(with, c.command, c.code);
    if (!doc.is_null()) {
      EXPECT_TRUE(testing::contains(doc["error"].get<std::string>(), c.error_says))
          << c.command << ": " << doc.dump();
    }
    const auto plain = testing::run_cli_on(c.scenario, without_json(c.args), env);
    EXPECT_EQ(plain.exit_code, c.code) << c.command << " without --json: " << plain.err;
  }
}

TEST(CliJsonFailure, StopAndRpcStopWithoutAStateDirectory) {
  // No XDG_STATE_HOME and no HOME: nowhere to find the pid file.
  for (const auto& [args, command] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"stop", "--json"}, "stop"}, {{"rpc", "stop", "--json"}, "rpc stop"}}) {
    const auto plain = testing::run_cli_on("gb10", without_json(args), {});
    ASSERT_NE(plain.exit_code, 0) << plain.err;
    const auto with = testing::run_cli_on("gb10", args, {});
    const json doc = expect_failure_document(with, command, plain.exit_code);
    if (!doc.is_null()) {
      EXPECT_TRUE(testing::contains(doc["error"].get<std::string>(), "XDG_STATE_HOME"))
          << doc.dump();
    }
  }
}

TEST(CliJsonFailure, WatchWithNothingToWatchPrintsOneJsonLine) {
  testing::TempDir state;
  platform::Environment env;
  env.set("XDG_STATE_HOME", state.path().string());
  const auto result = testing::run_cli_on("gb10", {"watch", "--json", "--once"}, env);
  // JSON Lines: the failure is one object on one line, like the events.
  EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 1) << result.out;
  const json doc = expect_failure_document(result, "watch", 1);
  if (!doc.is_null()) {
    EXPECT_TRUE(testing::contains(doc["error"].get<std::string>(), "no llama-server"))
        << doc.dump();
  }
}

TEST(CliJsonFailure, ARefusedPlanIsOneDocumentWithThePlanAndTheError) {
  testing::TempDir dir;
  const auto model = dir.path() / "m.gguf";
  testing::report_model().write(model);
  const auto result =
      testing::run_cli_on("no-gpu",
                          {"launch", "--json", "--dry-run", "--model", model.string(),
                           "--llama-server", testing::stand_in_server_path().string(), "--slots",
                           "3", "--no-kvu", "--reserve", "2GB", "--cache-ram", "0", "--no-fit"},
                          {});
  const json doc = expect_failure_document(result, "launch", 3);
  if (!doc.is_null()) {
    EXPECT_TRUE(doc.contains("plan")) << doc.dump();
    EXPECT_TRUE(testing::contains(doc["error"].get<std::string>(), "does not fit")) << doc.dump();
  }
}

TEST(CliJsonFailure, AFailedBandwidthBenchSaysSoInItsDocument) {
  testing::FakeBandwidth fake;
  fake.fail_validation = true;
  const auto result =
      testing::run_cli_on("gb10", {"bench", "--json", "--quick"}, {},
                          [&fake](const kernels::CaseSpec& spec) { return fake(spec); });
  const json doc = expect_failure_document(result, "bench", 1);
  if (!doc.is_null()) {
    EXPECT_TRUE(doc.contains("cases")) << doc.dump();  // the figures are still there
  }
}

}  // namespace
}  // namespace gb10tune
