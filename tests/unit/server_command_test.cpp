// The command builder's tuning options: --threads and --spec-draft-p-min appear only when their
// settings ask for something other than llama.cpp's default, p-min only while drafting, each
// checked against the build's --help.
#include "gb10tune/launch/server_command.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::launch {
namespace {

using nlohmann::json;

server::ServerFlags command_test_flags(
    const std::string& help = "help-2026-08-commit-3f545be.txt") {
  return server::ServerFlags::parse_help(
      testing::read_text(testing::fixture("llama-server/" + help)));
}

// The argv for the tiny qwen35 (with its MTP head unless `mtp_head` is false) under `values`.
Expected<ServerCommand> command_test_build(
    const json& values, bool mtp_head = true,
    const server::ServerFlags& flags = command_test_flags()) {
  const auto model = testing::describe(testing::tiny_qwen35_model(mtp_head));
  EXPECT_TRUE(model) << (model ? "" : model.error().message);
  const LaunchSettings settings = LaunchSettings::resolve({{"command line", values}});
  CommandInputs inputs;
  inputs.server_path = "/opt/llama/llama-server";
  inputs.model_path = "/models/m.gguf";
  return build_server_command(settings, *model, flags, inputs);
}

// The value after `option` in `argv`; "" when the option is absent.
std::string command_test_value(const std::vector<std::string>& argv, const std::string& option) {
  const auto it = std::find(argv.begin(), argv.end(), option);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

TEST(ServerCommandTuning, DefaultsAddNeitherThreadsNorPMin) {
  const auto built = command_test_build(json::object());
  ASSERT_TRUE(built) << built.error().message;
  EXPECT_EQ(command_test_value(built->argv, "--spec-draft-n-max"), "4");
  EXPECT_EQ(std::count(built->argv.begin(), built->argv.end(), "--threads"), 0);
  EXPECT_EQ(std::count(built->argv.begin(), built->argv.end(), "--spec-draft-p-min"), 0);
}

TEST(ServerCommandTuning, ThreadsAndPMinBecomeOptions) {
  const auto built = command_test_build({{"threads", 8}, {"draft_p_min", 0.75}});
  ASSERT_TRUE(built) << built.error().message;
  EXPECT_EQ(command_test_value(built->argv, "--threads"), "8");
  EXPECT_EQ(command_test_value(built->argv, "--spec-draft-p-min"), "0.75");
  // p-min follows the draft depth it belongs to.
  const auto depth = std::find(built->argv.begin(), built->argv.end(), "--spec-draft-n-max");
  EXPECT_EQ(*(depth + 2), "--spec-draft-p-min");
}

TEST(ServerCommandTuning, PMinOnlyWhileDrafting) {
  const auto off = command_test_build({{"draft_p_min", 0.5}, {"mtp", "off"}});
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_EQ(std::count(off->argv.begin(), off->argv.end(), "--spec-draft-p-min"), 0);
  const auto no_head = command_test_build({{"draft_p_min", 0.5}}, false);
  ASSERT_TRUE(no_head) << no_head.error().message;
  EXPECT_EQ(std::count(no_head->argv.begin(), no_head->argv.end(), "--spec-draft-p-min"), 0);
}

TEST(ServerCommandTuning, ABuildWithoutThreadsIsAdaptedNotRefused) {
  // The 2025-02 build has -t/--threads; one without it is made by dropping the line.
  std::string help =
      testing::read_text(testing::fixture("llama-server/help-2026-08-commit-3f545be.txt"));
  const auto at = help.find("-t,    --threads N");
  ASSERT_NE(at, std::string::npos);
  help.erase(at, help.find('\n', at) - at + 1);
  const auto built =
      command_test_build({{"threads", 4}}, true, server::ServerFlags::parse_help(help));
  ASSERT_TRUE(built) << built.error().message;
  EXPECT_EQ(std::count(built->argv.begin(), built->argv.end(), "--threads"), 0);
  EXPECT_TRUE(std::any_of(built->adaptations.begin(), built->adaptations.end(),
                          [](const std::string& a) { return testing::contains(a, "--threads"); }));
}

TEST(ServerCommandTuning, ExtraThreadsOverridingThePlannedOneIsRefused) {
  const auto planned =
      command_test_build({{"threads", 8}, {"extra_args", json::array({"--threads", "4"})}});
  ASSERT_FALSE(planned);
  EXPECT_TRUE(testing::contains(planned.error().message, "use launch's own --threads"))
      << planned.error().message;
  // Without launch's own value, an extra --threads is passed on as before.
  const auto passed = command_test_build({{"extra_args", json::array({"--threads", "4"})}});
  ASSERT_TRUE(passed) << passed.error().message;
  EXPECT_EQ(command_test_value(passed->argv, "--threads"), "4");
}

TEST(ServerCommandTuning, PMinIsANumberFromZeroToOne) {
  EXPECT_TRUE(check_setting("draft_p_min", 0.5, "test"));
  EXPECT_TRUE(check_setting("draft_p_min", 1, "test"));
  for (const json& bad : {json(1.5), json(-0.1), json("0.5"), json(nullptr)}) {
    const Status checked = check_setting("draft_p_min", bad, "profile x");
    ASSERT_FALSE(checked) << bad.dump();
    EXPECT_TRUE(testing::contains(checked.error().message, "a number from 0 to 1"))
        << checked.error().message;
  }
  EXPECT_FALSE(check_setting("draft_p_min", std::numeric_limits<double>::infinity(), "test"));
}

}  // namespace
}  // namespace gb10tune::launch
