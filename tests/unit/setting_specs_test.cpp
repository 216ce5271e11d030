#include "gb10tune/launch/setting_specs.hpp"

#include <gtest/gtest.h>

#include "gb10tune/launch/profile.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/rpc/node_plan.hpp"
#include "gb10tune/util/size_option.hpp"

namespace gb10tune::launch {
namespace {

const SettingSpec& spec_named(std::string_view key) {
  for (const SettingSpec& spec : launch_setting_specs()) {
    if (spec.key == key) {
      return spec;
    }
  }
  throw std::logic_error("no spec " + std::string(key));
}

TEST(SettingHelp, SaysTheDefaultEachShippedProfilesValueAndTheRange) {
  EXPECT_EQ(setting_help(spec_named("slots")),
            "Parallel slots (-np) [default 1; profiles: gb10-dense-mtp 3, gb10-moe 2, "
            "single-slot 1; 1 to 256]");
  // Set by no profile: the built-in default only.
  EXPECT_EQ(setting_help(spec_named("overhead")).rfind("Extra margin above the modelled", 0), 0u);
  EXPECT_NE(setting_help(spec_named("overhead")).find("[default 32MiB]"), std::string::npos);
  // An empty default means "found for you": the help says how, not `default `.
  EXPECT_EQ(setting_help(spec_named("model")).find("[default"), std::string::npos);
}

TEST(SettingHelp, ValueTextIsTheChoicesUnlessGiven) {
  EXPECT_EQ(setting_value_text(spec_named("flash_attn")), "on|off|auto");
  EXPECT_EQ(setting_value_text(spec_named("reserve")), "SIZE");
}

TEST(SettingHelp, EveryOptionIsALaunchOptionName) {
  for (const SettingSpec& spec : launch_setting_specs()) {
    if (!spec.option.empty()) {
      EXPECT_EQ(spec.option.substr(0, 2), "--") << spec.key;
      EXPECT_NE(spec.kind, SettingKind::boolean) << spec.key << ": a switch takes no value";
    }
  }
}

// The sizes' built-in texts are the defaults the plan and its readers assume (the watch's
// warning, probe's budgets).
TEST(SettingSpecs, BuiltInSizesAreThePlansDefaults) {
  const auto bytes = [](std::string_view key) {
    const auto value =
        size_option(std::string(key), spec_named(key).built_in.get<std::string>(), 0);
    EXPECT_TRUE(value) << key;
    return value.value_or(0);
  };
  EXPECT_EQ(bytes("reserve"), plan::kDefaultReserveBytes);
  EXPECT_EQ(bytes("gpu_reserve"), plan::kDefaultGpuReserveBytes);
  EXPECT_EQ(bytes("rpc_reserve"), rpc::kDefaultWorkerReserveBytes);
  EXPECT_EQ(bytes("overhead"), plan::kDefaultOverheadBytes);
}

// A switch names its setting in messages; a setting without an option or a switch is named
// after its key.
TEST(SettingSpecs, EachSettingHasOneOptionNameForMessages) {
  EXPECT_EQ(setting_option("slots"), "--slots");
  EXPECT_EQ(setting_option("model"), "--model");
  EXPECT_EQ(setting_option("kv_unified"), "--kvu/--no-kvu");
  EXPECT_EQ(setting_option("mtp"), "--mtp/--no-mtp");
  EXPECT_EQ(setting_option("fit"), "--fit/--no-fit");
  EXPECT_EQ(setting_option("extra_args"), "--extra-args");
  // Every switch sets a value its setting accepts.
  for (const SettingSpec& spec : launch_setting_specs()) {
    for (const SettingFlag& flag : spec.flags) {
      EXPECT_TRUE(check_setting(spec.key, flag.value, std::string(flag.name)))
          << flag.name << " sets " << flag.value.dump();
      EXPECT_EQ(flag.name.substr(0, 2), "--") << flag.name;
    }
  }
}

// The reserves are settings like the others: a profile or the user config may set them.
TEST(SettingSpecs, TheReservesAreSettingsOfAProfile) {
  const auto doc = parse_settings_document(
      R"({"settings": {"gpu_reserve": "2GiB", "rpc_reserve": "512MiB", "reserve": "8GB"}})",
      "p.json");
  ASSERT_TRUE(doc) << doc.error().message;
  const LaunchSettings s = LaunchSettings::resolve({{"profile p.json", doc->settings}});
  EXPECT_EQ(s.text("gpu_reserve"), "2GiB");
  EXPECT_EQ(s.at("rpc_reserve").source, "profile p.json");
  EXPECT_FALSE(parse_settings_document(R"({"settings": {"gpu_reserve": 2}})", "p.json"));
}

}  // namespace
}  // namespace gb10tune::launch
