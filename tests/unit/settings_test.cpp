#include "gb10tune/server/settings.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::server {
namespace {

const ServerFlags& flags() {
  static const auto parsed = ServerFlags::parse_help(
      testing::read_text(testing::fixture("llama-server/help-2026-08-commit-3f545be.txt")));
  return parsed;
}

TEST(Settings, LaterPlacesWinInLlamaCppsOrder) {
  SettingInputs in;
  in.system_config = "[*]\nctx-size = 1000\nparallel = 2\n";
  in.user_config_path = "/home/u/.config/llama.cpp/config.ini";
  in.user_config = "ctx-size = 2000 ; a comment\nLLAMA_ARG_FLASH_ATTN = off\n";
  in.env.set("LLAMA_ARG_CTX_SIZE", "3000");
  in.argv = {"llama-server", "-c", "4000"};
  const auto s = resolve_settings(flags(), in);
  ASSERT_NE(s.get("ctx-size"), nullptr);
  EXPECT_EQ(s.get("-c")->value, "4000");
  EXPECT_EQ(s.get("-c")->source, SettingSource::command_line);
  EXPECT_EQ(s.get("-c")->origin, "argv[1] -c");
  EXPECT_EQ(s.get("-np")->value, "2");
  EXPECT_EQ(s.get("-np")->source, SettingSource::system_config);
  EXPECT_EQ(s.get("-np")->origin, "/etc/llama.cpp/config.ini:3");
  EXPECT_EQ(s.get("-fa")->value, "off");
  EXPECT_EQ(s.get("-fa")->source, SettingSource::user_config);
  // The history keeps every assignment of ctx-size, overridden ones too.
  int ctx_assignments = 0;
  for (const auto& [key, value] : s.history) {
    ctx_assignments += key == "ctx-size";
  }
  EXPECT_EQ(ctx_assignments, 4);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(Settings, SwitchesFromEveryPlace) {
  SettingInputs in;
  in.system_config = "no-kv-unified = true\nmmap = false\n";
  in.env.set("LLAMA_ARG_BACKEND_SAMPLING", "1");
  in.env.set("LLAMA_ARG_NO_JINJA", "");  // the LLAMA_ARG_NO_ form turns a switch off
  in.argv = {"llama-server", "--no-swa-full"};
  const auto s = resolve_settings(flags(), in);
  EXPECT_TRUE(s.is_off("-kvu"));
  EXPECT_TRUE(s.is_off("--mmap"));
  EXPECT_TRUE(s.is_on("--backend-sampling"));
  EXPECT_TRUE(s.is_off("--jinja"));
  EXPECT_EQ(s.get("--jinja")->origin, "LLAMA_ARG_NO_JINJA");
  // --swa-full has no negative form in this build.
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("--no-swa-full"), std::string::npos);
}

TEST(Settings, PlainSwitchInTheEnvironmentNeedsATruthyValue) {
  SettingInputs in;
  in.env.set("LLAMA_ARG_BACKEND_SAMPLING", "0");
  in.env.set("LLAMA_ARG_SWA_FULL", "true");
  const auto s = resolve_settings(flags(), in);
  EXPECT_EQ(s.get("--backend-sampling"), nullptr);
  EXPECT_TRUE(s.is_on("--swa-full"));
}

TEST(Settings, ReportsWhatItCannotApply) {
  SettingInputs in;
  in.user_config_path = "/u/config.ini";
  in.user_config = "[*]\nwhatever = 1\nthis line is broken\nbackend-sampling = false\n";
  in.argv = {"llama-server", "--draft-max", "4", "-c"};
  const auto s = resolve_settings(flags(), in);
  ASSERT_EQ(s.warnings.size(), 5u);
  // Malformed lines are found while reading, unknown keys while applying.
  EXPECT_NE(s.warnings[0].find("/u/config.ini:3"), std::string::npos);
  EXPECT_NE(s.warnings[1].find("/u/config.ini:2: 'whatever'"), std::string::npos);
  // llama.cpp applies a plain switch from a config file whatever its value.
  EXPECT_NE(s.warnings[2].find("whatever its value"), std::string::npos);
  EXPECT_TRUE(s.is_on("--backend-sampling"));
  EXPECT_NE(s.warnings[3].find("aborts on it: the argument has been removed"), std::string::npos);
  EXPECT_NE(s.warnings[4].find("value is missing"), std::string::npos);
}

TEST(Settings, OnlyTheGlobalAndDefaultSectionsApply) {
  SettingInputs in;
  in.system_config = "[my-model]\nctx-size = 99\n[*]\nparallel = 3\n";
  const auto s = resolve_settings(flags(), in);
  EXPECT_EQ(s.get("-c"), nullptr);
  EXPECT_EQ(s.get("-np")->value, "3");
}

TEST(Settings, GathersConfigFilesUnderTheSysroot) {
  testing::TempDir root;
  root.write("etc/llama.cpp/config.ini", "parallel = 5\n");
  root.write("home/u/.config/llama.cpp/config.ini", "ctx-size = 8192\n");
  platform::Environment env;
  env.set("HOME", "/home/u");
  const auto in = gather_inputs(platform::Sysroot(root.path()), env, {"llama-server"});
  ASSERT_TRUE(in.system_config);
  ASSERT_TRUE(in.user_config);
  EXPECT_EQ(in.user_config_path, "/home/u/.config/llama.cpp/config.ini");
  env.set("XDG_CONFIG_HOME", "/xdg");
  const auto xdg = gather_inputs(platform::Sysroot(root.path()), env, {"llama-server"});
  EXPECT_EQ(xdg.user_config_path, "/xdg/llama.cpp/config.ini");
  EXPECT_FALSE(xdg.user_config);
  EXPECT_TRUE(xdg.warnings.empty());
}

}  // namespace
}  // namespace gb10tune::server
