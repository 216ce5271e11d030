// launch --help against launch's behaviour: every setting option shows the default the dry run
// uses (built-in, or each shipped profile's), ranges are the settings' own, and the exit-code
// footer lists what launch returns.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gb10tune/launch/profile.hpp"
#include "gb10tune/util/strings.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;

// The launch settings that have an option of their own taking a value, and that option.
const std::vector<std::pair<std::string, std::string>> kSettingOptions = {
    {"models_dir", "--models-dir"},
    {"model", "--model"},
    {"mmproj", "--mmproj"},
    {"llama_server", "--llama-server"},
    {"slots", "--slots"},
    {"ctx_per_slot", "--ctx-per-slot"},
    {"gpu_layers", "--gpu-layers"},
    {"flash_attn", "--flash-attn"},
    {"draft_n_max", "--draft-n-max"},
    {"draft_p_min", "--draft-p-min"},
    {"cache_ram_mib", "--cache-ram"},
    {"cache_type_k", "--cache-type-k"},
    {"cache_type_v", "--cache-type-v"},
    {"ubatch", "--ubatch"},
    {"threads", "--threads"},
    {"host", "--host"},
    {"port", "--port"},
    {"reserve", "--reserve"},
    {"gpu_reserve", "--gpu-reserve"},
    {"rpc_reserve", "--rpc-reserve"},
    {"overhead", "--overhead"},
    {"timeout_s", "--timeout"},
};

// What `help` says about `option` ("--slots"): the line that starts with its names, and the
// next one when CLI11 put the description there.
std::string help_line_of(const std::string& help, const std::string& option) {
  const std::vector<std::string_view> lines = split(help, '\n');
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string_view::npos) {
      continue;
    }
    const std::string names(line.substr(first, line.find(' ', first) - first));
    if (names == option || names.rfind(option + ",", 0) == 0 ||
        names.find("," + option) != std::string::npos) {
      const bool continued = i + 1 < lines.size() && trim(lines[i + 1]).substr(0, 1) != "-";
      return std::string(line) + (continued ? " " + std::string(trim(lines[i + 1])) : "");
    }
  }
  return "";
}

// A value as the help shows it: text as is, anything else as JSON.
std::string shown(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

TEST(CliLaunchHelp, EveryDefaultShownIsTheOneTheDryRunUses) {
  testing::TempDir dir;
  const auto model = dir.path() / "m.gguf";
  testing::tiny_qwen35_model().write(model);
  const auto help = testing::run_binary({"launch", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.out;
  for (const auto& [profile, text] : launch::builtin_profiles()) {
    const auto result = testing::run_cli_on(
        "gb10",
        {"launch", "--dry-run", "--json", "--model", model.string(), "--profile", profile,
         "--llama-server", testing::stand_in_server_path().string()},
        {});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const json settings = json::parse(result.out).at("settings");
    for (const auto& [key, option] : kSettingOptions) {
      const std::string line = help_line_of(help.out, option);
      ASSERT_FALSE(line.empty()) << option << " is not in launch --help";
      const json& setting = settings.at(key);
      const std::string source = setting.at("source");
      const std::string value = shown(setting.at("value"));
      if (source == "built-in" && !value.empty()) {
        EXPECT_TRUE(testing::contains(line, "default " + value))
            << option << " runs with " << value << " (built-in) but its help says: " << line;
      } else if (source == "profile " + profile) {
        EXPECT_TRUE(testing::contains(line, profile + " " + value))
            << option << " runs with " << value << " under profile " << profile
            << " but its help says: " << line;
      }
    }
  }
}

TEST(CliLaunchHelp, TheCheckedOptionsAreEveryOptionOfASetting) {
  std::vector<std::pair<std::string, std::string>> from_specs;
  for (const launch::SettingSpec& spec : launch::launch_setting_specs()) {
    if (!spec.option.empty()) {
      const std::string names(spec.option);
      from_specs.emplace_back(std::string(spec.key), names.substr(0, names.find(',')));
    }
  }
  EXPECT_EQ(from_specs, kSettingOptions);
}

TEST(CliLaunchHelp, ARangeErrorIsTheSettingsOwn) {
  testing::TempDir dir;
  const auto model = dir.path() / "m.gguf";
  testing::tiny_qwen35_model().write(model);
  for (const auto& [option, value, range] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--slots", "0", "between 1 and 256"},
           {"--port", "70000", "between 1 and 65535"},
           {"--draft-n-max", "65", "between 1 and 64"},
           {"--draft-p-min", "1.5", "a number from 0 to 1"},
           {"--threads", "-1", "between 0 and 4096"},
           {"--timeout", "0", "between 1 and 86400"},
           {"--flash-attn", "maybe", "one of on, off, auto"}}) {
    const auto result = testing::run_cli_on(
        "gb10", {"launch", "--dry-run", "--model", model.string(), option, value}, {});
    EXPECT_EQ(result.exit_code, 2) << option;
    EXPECT_TRUE(testing::contains(result.err, "command line " + option)) << result.err;
    EXPECT_TRUE(testing::contains(result.err, range)) << result.err;
  }
}

TEST(CliLaunchHelp, ExitCodeFooterListsWhatLaunchReturns) {
  const auto help = testing::run_binary({"launch", "--help"});
  const std::string footer = help.out.substr(help.out.find("Exit codes:"));
  // 1: a server that launch started still runs (CliLaunchStart.StartsVerifiesAndStops); 130 and
  // 143: SIGINT and SIGTERM while it loads (CliSignals).
  for (const std::string code :
       {"0 started", "1 a server", "2 usage", "3 memory", "5 the server", "130 ", "143 "}) {
    EXPECT_TRUE(testing::contains(footer, code)) << code << " missing in: " << footer;
  }
}

}  // namespace
}  // namespace gb10tune
