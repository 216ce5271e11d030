// launch --print systemd|llama-swap in both forms: re-planning (the default: this gb10tune
// launched in the foreground with the same request, read back as systemd and a YAML parser read
// it) and frozen (the command planned now); the preset only frozen.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/util/shell_quote.hpp"
#include "support/stand_in.hpp"
#include "support/systemd_unit_reader.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::testing {
namespace {

// A model whose path means something to systemd, YAML and a shell.
struct FormModel {
  TempDir dir;
  std::string model = (dir.path() / "odd %h $HOME ;dir/model 'q' \"d\" 100%.gguf").string();
  FormModel() {
    std::filesystem::create_directories(std::filesystem::path(model).parent_path());
    tiny_qwen35_model().write(model);
  }
};

// `launch ARGS --model M --llama-server STAND-IN` in-process on the gb10 fixture.
CliResult form_launch(const FormModel& m, std::vector<std::string> args) {
  args.insert(args.begin(),
              {"launch", "--model", m.model, "--llama-server", stand_in_server_path().string()});
  return run_cli_on("gb10", args, {});
}

// This process's executable: what an in-process run finds in /proc/self/exe.
std::string form_self_path() {
  const auto exe = sys::read_process_exe(platform::Sysroot(), platform::current_pid());
  EXPECT_TRUE(exe) << "no /proc/self/exe";
  return exe ? exe->path : std::string();
}

// The argv the unit's ExecStart= runs, read back as systemd reads it; no problem allowed.
std::vector<std::string> form_exec_argv(const std::string& unit) {
  const UnitReading reading = read_unit(unit);
  std::vector<std::string> problems = reading.problems;
  const auto exec = reading.values("Service", "ExecStart");
  EXPECT_EQ(exec.size(), 1u) << unit;
  std::vector<std::string> argv;
  if (!exec.empty()) {
    argv = unit_exec_argv(exec[0], problems);
  }
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems) << "\n" << unit;
  return argv;
}

TEST(CliLaunchExportForm, SystemdReplansByDefaultWithThisGb10tuneInTheForeground) {
  FormModel m;
  const auto printed = form_launch(m, {"--print", "systemd", "--slots", "2", "--no-kvu"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  const std::vector<std::string> argv = form_exec_argv(printed.out);
  ASSERT_GE(argv.size(), 3u) << printed.out;
  EXPECT_EQ(argv[0], form_self_path());
  EXPECT_EQ(std::vector<std::string>(argv.begin() + 1, argv.begin() + 3),
            (std::vector<std::string>{"launch", "--foreground"}));
  EXPECT_NE(std::find(argv.begin(), argv.end(), m.model), argv.end()) << printed.out;
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--no-kvu"), argv.end()) << printed.out;
  // gb10tune cleans the environment itself at each start.
  EXPECT_EQ(printed.out.find("UnsetEnvironment="), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find("planned by gb10tune at each start"), std::string::npos);
}

// The re-planning command asks what the first one asked: the same plan, to the argv.
TEST(CliLaunchExportForm, TheReplanningCommandPlansWhatTheCommandLineAsked) {
  FormModel m;
  const std::vector<std::string> asked = {
      "--slots", "2",  "--ctx-per-slot", "8192", "--no-kvu", "--cache-ram",
      "0",       "--", "--temp",         "0.7"};
  std::vector<std::string> print = {"--print", "systemd"};
  print.insert(print.end(), asked.begin(), asked.end());
  const auto printed = form_launch(m, print);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  std::vector<std::string> replan = form_exec_argv(printed.out);
  ASSERT_GE(replan.size(), 3u) << printed.out;

  std::vector<std::string> planned_args = {"--dry-run", "--json"};
  planned_args.insert(planned_args.end(), asked.begin(), asked.end());
  const auto planned = form_launch(m, planned_args);
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  // What the unit runs, as a dry run: argv[0] and --foreground out, "launch" kept.
  replan.erase(replan.begin() + 2);
  replan.erase(replan.begin());
  replan.insert(replan.begin() + 1, {"--dry-run", "--json"});
  const auto replanned = run_cli_on("gb10", replan, {});
  ASSERT_EQ(replanned.exit_code, 0) << replanned.err;
  const auto argv_of = [](const std::string& out) {
    return nlohmann::json::parse(out)["command_line"]["argv"];
  };
  EXPECT_EQ(argv_of(replanned.out), argv_of(planned.out));
  EXPECT_NE(argv_of(planned.out).dump().find("\"0.7\""), std::string::npos);
}

TEST(CliLaunchExportForm, FrozenSystemdRunsThePlannedCommand) {
  FormModel m;
  const auto planned = form_launch(m, {"--dry-run", "--json"});
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const auto printed = form_launch(m, {"--print", "systemd", "--form", "frozen"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_EQ(
      form_exec_argv(printed.out),
      nlohmann::json::parse(planned.out)["command_line"]["argv"].get<std::vector<std::string>>());
  EXPECT_NE(printed.out.find("UnsetEnvironment=GGML_CUDA_ENABLE_UNIFIED_MEMORY"),
            std::string::npos);
}

// llama-swap's entry, read back by a YAML parser: the systemd unit's re-planning command, on
// llama-swap's port.
TEST(CliLaunchExportForm, LlamaSwapReplansOnItsPort) {
  FormModel m;
  const auto unit = form_launch(m, {"--print", "systemd"});
  ASSERT_EQ(unit.exit_code, 0) << unit.err;
  const auto printed = form_launch(m, {"--print", "llama-swap"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  YAML::Node doc;
  ASSERT_NO_THROW(doc = YAML::Load(printed.out)) << printed.out;
  const YAML::Node entry = doc["models"].begin()->second;
  ASSERT_TRUE(entry["cmd"].IsScalar()) << printed.out;
  EXPECT_EQ(entry["cmd"].as<std::string>(),
            shell_join(form_exec_argv(unit.out)) + " --port ${PORT}");
  EXPECT_EQ(entry["checkEndpoint"].as<std::string>(), "/health");

  const auto frozen = form_launch(m, {"--print", "llama-swap", "--form", "frozen"});
  ASSERT_EQ(frozen.exit_code, 0) << frozen.err;
  const std::string cmd = YAML::Load(frozen.out)["models"].begin()->second["cmd"].as<std::string>();
  EXPECT_EQ(cmd.rfind("/usr/bin/env -u GGML_CUDA_ENABLE_UNIFIED_MEMORY " +
                          shell_quote(stand_in_server_path().string()) + " ",
                      0),
            0u)
      << cmd;
}

TEST(CliLaunchExportForm, PresetIsOnlyFrozenAndTheFormNeedsPrint) {
  FormModel m;
  const auto preset = form_launch(m, {"--print", "preset"});
  EXPECT_EQ(preset.exit_code, 0) << preset.err;
  const auto replan = form_launch(m, {"--print", "preset", "--form", "replan"});
  EXPECT_EQ(replan.exit_code, 2) << replan.out;
  EXPECT_TRUE(replan.out.empty()) << replan.out;
  EXPECT_TRUE(contains(replan.err, "--print preset has only the frozen form")) << replan.err;
  const auto alone = form_launch(m, {"--dry-run", "--form", "frozen"});
  EXPECT_EQ(alone.exit_code, 2) << alone.out;
  EXPECT_TRUE(contains(alone.err, "--print")) << alone.err;
}

}  // namespace
}  // namespace gb10tune::testing
