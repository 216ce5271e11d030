// One option name, one meaning: every subcommand's options walked from the CLI11 tree, the
// names several commands share checked against what they must mean, and the old spellings
// kept as hidden aliases.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli/app.hpp"
#include "support/fake_bandwidth.hpp"
#include "support/test_context.hpp"

namespace gb10tune {
namespace {

// One visible option of one command.
struct SeenOption {
  std::string command;  // "rpc start"
  std::string description;
};

// Every visible option name ("--grace", "-c") → where it appears and what it says there.
std::map<std::string, std::vector<SeenOption>> visible_option_names() {
  const auto line = cli::make_command_line();
  std::map<std::string, std::vector<SeenOption>> names;
  std::vector<std::pair<std::string, const CLI::App*>> pending;
  for (const CLI::App* sub : line->app.get_subcommands({})) {
    pending.emplace_back(sub->get_name(), sub);
  }
  while (!pending.empty()) {
    const auto [path, sub] = pending.back();
    pending.pop_back();
    for (const CLI::App* nested : sub->get_subcommands({})) {
      pending.emplace_back(path + " " + nested->get_name(), nested);
    }
    for (const CLI::Option* option : sub->get_options()) {
      if (option->get_group().empty() || option->get_name() == "--help") {
        continue;  // hidden, or CLI11's own
      }
      for (const std::string& name : option->get_lnames()) {
        names["--" + name].push_back({path, option->get_description()});
      }
      for (const std::string& name : option->get_snames()) {
        names["-" + name].push_back({path, option->get_description()});
      }
    }
  }
  return names;
}

// What a name shared by several commands must mean: a phrase every description of it holds,
// and one none may hold.
struct Meaning {
  std::string must_say;
  std::string must_not_say;
};

const std::map<std::string, Meaning>& shared_meanings() {
  static const std::map<std::string, Meaning> table = {
      {"--json", {"JSON", ""}},
      // The wait between SIGTERM and SIGKILL is --grace wherever a process is stopped ...
      {"--grace", {"SIGKILL", ""}},
      // ... and --timeout is how long to wait for an answer, never that.
      {"--timeout", {"wait", "SIGKILL"}},
      {"--llama-server", {"llama-server", "rpc-server"}},
      {"--host", {"ddress", ""}},
      {"--port", {"port", ""}},
      {"--reserve", {"kept", ""}},
      {"--gpu-reserve", {"each discrete GPU", ""}},
      {"--model", {"GGUF", ""}},
      {"--url", {"server", ""}},
      {"--samples", {"easured", ""}},
      {"--warmup", {"first", ""}},
      {"--print", {"start nothing", ""}},
      {"--force", {"Go on past", ""}},
      // bench server and tune send the same workloads the same way, ...
      {"--concurrency", {"arallel sessions", ""}},
      {"--prompts", {"JSON lines", ""}},
      {"--max-context", {"Leave out the requests", ""}},
      // ... and tune's memory floor is watch's.
      {"--floor", {"MemAvailable falls below", ""}},
      // What a command keeps for later (probe's result, tune's winner) is kept unless this.
      {"--no-save", {"Do not save the", ""}},
      // llama.cpp's -t: the CPU threads of the server (launch) or of the worker (rpc start).
      {"--threads", {"CPU", ""}},
      // The decode ceiling's bandwidth, in bench server and plan.
      {"--bandwidth", {"GB/s for the", ""}},
  };
  return table;
}

TEST(CliOptionNames, ANameSharedByCommandsMeansTheSameInEach) {
  for (const auto& [name, seen] : visible_option_names()) {
    std::set<std::string> commands;
    for (const SeenOption& option : seen) {
      commands.insert(option.command);
    }
    // One description everywhere (launch's settings options, which plan binds from the same
    // table) cannot mean two things.
    const bool one_text = std::all_of(seen.begin(), seen.end(), [&](const SeenOption& option) {
      return option.description == seen.front().description;
    });
    if (commands.size() < 2 || one_text) {
      continue;
    }
    const auto meaning = shared_meanings().find(name);
    ASSERT_NE(meaning, shared_meanings().end())
        << name << " is an option of several commands; say what it means in shared_meanings";
    for (const SeenOption& option : seen) {
      EXPECT_TRUE(testing::contains(option.description, meaning->second.must_say))
          << name << " of `" << option.command << "` does not say '" << meaning->second.must_say
          << "': " << option.description;
      if (!meaning->second.must_not_say.empty()) {
        EXPECT_FALSE(testing::contains(option.description, meaning->second.must_not_say))
            << name << " of `" << option.command << "` says '" << meaning->second.must_not_say
            << "': " << option.description;
      }
    }
  }
}

TEST(CliOptionNames, ReservedNamesHaveOneMeaningEverywhere) {
  const auto names = visible_option_names();
  // -c is llama-server's context size: launch's --ctx-size, and nothing else.
  ASSERT_TRUE(names.count("-c"));
  for (const SeenOption& option : names.at("-c")) {
    EXPECT_EQ(option.command, "launch") << option.description;
    EXPECT_TRUE(testing::contains(option.description, "Context tokens")) << option.description;
  }
  // --device is llama.cpp's device list (rpc-server -d); a CUDA ordinal is --cuda-device.
  ASSERT_TRUE(names.count("--device"));
  for (const SeenOption& option : names.at("--device")) {
    EXPECT_TRUE(testing::contains(option.description, "llama.cpp's device names"))
        << option.command << ": " << option.description;
  }
  ASSERT_TRUE(names.count("--cuda-device"));
  EXPECT_TRUE(testing::contains(names.at("--cuda-device").front().description, "CUDA device"));
  // A llama.cpp binary is named after itself: --llama-server, --rpc-server.
  ASSERT_TRUE(names.count("--rpc-server"));
  EXPECT_EQ(names.at("--rpc-server").front().command, "rpc start");
  EXPECT_FALSE(names.count("--server-bin"));
  // Stopping a process waits --grace seconds before SIGKILL, in every command that stops one.
  ASSERT_TRUE(names.count("--grace"));
  std::set<std::string> stoppers;
  for (const SeenOption& option : names.at("--grace")) {
    stoppers.insert(option.command);
  }
  EXPECT_EQ(stoppers, (std::set<std::string>{"stop", "watch", "rpc stop"}));
}

// The help of `command` (words), from the real binary.
std::string help_of(std::vector<std::string> command) {
  command.push_back("--help");
  const auto result = testing::run_binary(command);
  EXPECT_EQ(result.exit_code, 0) << result.out;
  return result.out;
}

TEST(CliOptionNames, OldSpellingsWorkButHelpShowsOnlyTheNewOnes) {
  struct Renamed {
    std::vector<std::string> command;
    std::string old_name;
    std::string new_name;
  };
  for (const Renamed& r :
       {Renamed{{"stop"}, "--timeout", "--grace"}, Renamed{{"rpc", "stop"}, "--timeout", "--grace"},
        Renamed{{"rpc", "start"}, "--server-bin", "--rpc-server"},
        Renamed{{"rpc", "start"}, "-c", "--cache"},
        Renamed{{"bench"}, "--device", "--cuda-device"}}) {
    const std::string help = help_of(r.command);
    EXPECT_TRUE(testing::contains(help, r.new_name + " ")) << r.new_name << " in:\n" << help;
    EXPECT_FALSE(testing::contains(help, r.old_name + " ") ||
                 testing::contains(help, r.old_name + ","))
        << r.old_name << " is still shown in:\n"
        << help;
  }
}

TEST(CliOptionNames, StopTakesTheOldTimeoutAsGraceAndSaysSo) {
  testing::TempDir dir;
  platform::Environment env;
  env.set("XDG_STATE_HOME", dir.path().string());
  const auto now = testing::run_cli_on("gb10", {"stop", "--grace", "3"}, env);
  EXPECT_EQ(now.exit_code, 0) << now.err;
  EXPECT_EQ(now.err, "");
  const auto old = testing::run_cli_on("gb10", {"stop", "--timeout", "3"}, env);
  EXPECT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(old.out, now.out);
  EXPECT_TRUE(testing::contains(old.err, "--timeout is now --grace")) << old.err;
}

TEST(CliOptionNames, RpcStartTakesTheOldSpellings) {
  // The binary named by either spelling is the one looked for (and not found).
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--rpc-server", "/nonexistent/rpc-server", "--cache"},
        std::vector<std::string>{"--server-bin", "/nonexistent/rpc-server", "-c"}}) {
    std::vector<std::string> args{"rpc", "start", "--port", "50999"};
    args.insert(args.end(), options.begin(), options.end());
    const auto result = testing::run_cli_on("gb10", args, {});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_TRUE(testing::contains(result.err, "/nonexistent/rpc-server")) << result.err;
  }
  const auto old = testing::run_cli_on(
      "gb10", {"rpc", "start", "--server-bin", "/nonexistent/rpc-server", "-c"}, {});
  EXPECT_TRUE(testing::contains(old.err, "--server-bin is now --rpc-server")) << old.err;
  EXPECT_TRUE(testing::contains(old.err, "-c is now --cache")) << old.err;
}

TEST(CliOptionNames, BenchTakesTheOldDeviceAsCudaDevice) {
  for (const std::string name : {"--cuda-device", "--device"}) {
    testing::FakeBandwidth fake;
    const auto result =
        testing::run_cli_on("gb10", {"bench", name, "3"}, {},
                            [&fake](const kernels::CaseSpec& spec) { return fake(spec); });
    EXPECT_EQ(result.exit_code, 2) << name;
    EXPECT_TRUE(testing::contains(result.err, "--cuda-device 3 does not exist")) << result.err;
  }
}

}  // namespace
}  // namespace gb10tune
