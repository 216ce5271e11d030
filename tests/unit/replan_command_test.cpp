// The re-planning command of launch's exports: every setting through its own option or switch,
// relative paths made absolute, the llama-server found pinned only when none was named, and the
// server arguments after "--".
#include "gb10tune/launch/replan_command.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gb10tune::launch {
namespace {

using Argv = std::vector<std::string>;

// The value after `option` in `argv`; "" when the option is not there.
std::string replan_value_of(const Argv& argv, const std::string& option) {
  const auto at = std::find(argv.begin(), argv.end(), option);
  return at == argv.end() || at + 1 == argv.end() ? std::string() : *(at + 1);
}

TEST(ReplanCommand, StartsWithTheProgramLaunchedInTheForeground) {
  const Argv argv = replan_argv("/opt/gb10tune/bin/gb10tune", LaunchRequest{}, "/srv", "");
  EXPECT_EQ(argv, (Argv{"/opt/gb10tune/bin/gb10tune", "launch", "--foreground"}));
}

TEST(ReplanCommand, EverySettingGoesThroughItsOwnOptionOrSwitch) {
  LaunchRequest request;
  request.values = {{"slots", 3},          {"ctx_per_slot", 196608}, {"kv_unified", "off"},
                    {"fit", "on"},         {"reserve", "2GB"},       {"draft_p_min", 0.75},
                    {"flash_attn", "auto"}};
  const Argv argv = replan_argv("/usr/bin/gb10tune", request, "/srv", "");
  EXPECT_EQ(replan_value_of(argv, "--slots"), "3");
  EXPECT_EQ(replan_value_of(argv, "--ctx-per-slot"), "196608");
  EXPECT_EQ(replan_value_of(argv, "--reserve"), "2GB");
  EXPECT_EQ(replan_value_of(argv, "--draft-p-min"), "0.75");
  EXPECT_EQ(replan_value_of(argv, "--flash-attn"), "auto");
  // A switch's value is said by the switch, and only by it.
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--no-kvu"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--fit"), argv.end());
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "off"), argv.end());
  EXPECT_EQ(argv.size(), 3u + 5 * 2 + 2);
}

TEST(ReplanCommand, RelativePathsBecomeAbsoluteAndWordsStay) {
  LaunchRequest request;
  request.values = {{"model", "models/../m.gguf"},
                    {"mmproj", "none"},
                    {"models_dir", "~/models"},
                    {"llama_server", "bin/llama-server"}};
  request.profile = "mine.json";
  const Argv argv =
      replan_argv("/usr/bin/gb10tune", request, "/home/me", "/elsewhere/llama-server");
  EXPECT_EQ(replan_value_of(argv, "--model"), "/home/me/m.gguf");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--no-mmproj"), argv.end());  // its switch
  EXPECT_EQ(replan_value_of(argv, "--models-dir"), "~/models");  // launch expands ~ itself
  EXPECT_EQ(replan_value_of(argv, "--llama-server"), "/home/me/bin/llama-server");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--llama-server"), 1);  // the named one only
  EXPECT_EQ(replan_value_of(argv, "--profile"), "/home/me/mine.json");

  request.profile = "gb10-moe";  // a shipped profile's name is no path
  EXPECT_EQ(replan_value_of(replan_argv("/g", request, "/home/me", ""), "--profile"), "gb10-moe");
}

TEST(ReplanCommand, TheServerFoundIsPinnedWhenNoneWasNamed) {
  const Argv argv = replan_argv("/g", LaunchRequest{}, "/", "/home/me/llama.cpp/llama-server");
  EXPECT_EQ(replan_value_of(argv, "--llama-server"), "/home/me/llama.cpp/llama-server");
}

TEST(ReplanCommand, LaunchOwnOptionsThenTheServerArgumentsAfterTheMark) {
  LaunchRequest request;
  request.ctx_size = 65536;
  request.backend = "cpu";
  request.rpc = "10.0.0.2:50052";
  request.force = true;
  request.extra = {"--temp", "0.7", "--port"};
  const Argv argv = replan_argv("/g", request, "/", "");
  EXPECT_EQ(argv, (Argv{"/g", "launch", "--foreground", "--ctx-size", "65536", "--backend", "cpu",
                        "--rpc", "10.0.0.2:50052", "--force", "--", "--temp", "0.7", "--port"}));
}

TEST(ReplanCommand, OnlySystemdAndLlamaSwapReplanByDefault) {
  EXPECT_TRUE(replans_by_default("systemd"));
  EXPECT_TRUE(replans_by_default("llama-swap"));
  EXPECT_FALSE(replans_by_default("preset"));
}

}  // namespace
}  // namespace gb10tune::launch
