#include "gb10tune/launch/profile.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gb10tune::launch
