// launch --profile NAME finds the user's profiles ($XDG_CONFIG_HOME/gb10tune/profiles) after the
// shipped ones: a shipped name wins (and the user's file it hides is named), an unknown name's
// error lists both kinds.
#include <gtest/gtest.h>

#include "gb10tune/launch/profile.hpp"
#include "support/test_context.hpp"

namespace gb10tune::launch {
namespace {

TEST(UserProfiles, ANameFindsTheUsersFile) {
  testing::TempDir dir;
  dir.write("tuned-m-decode.json", R"({"settings": {"draft_n_max": 6}})");
  const auto loaded = load_profile("tuned-m-decode", dir.path());
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->settings["draft_n_max"], 6);
  EXPECT_EQ(user_profile_names(dir.path()), std::vector<std::string>{"tuned-m-decode"});
}

TEST(UserProfiles, AShippedNameWinsAndTheHiddenFileIsNamed) {
  testing::TempDir dir;
  dir.write("single-slot.json", R"({"settings": {"slots": 7}})");
  const auto loaded = load_profile("single-slot", dir.path());
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->settings["slots"], 1);
  const auto note = shadowed_profile_note("single-slot", dir.path());
  ASSERT_TRUE(note);
  EXPECT_TRUE(testing::contains(*note, (dir.path() / "single-slot.json").string())) << *note;
  EXPECT_FALSE(shadowed_profile_note("tuned-x", dir.path()));
}

TEST(UserProfiles, AnUnknownNameListsTheShippedAndTheUsers) {
  testing::TempDir dir;
  dir.write("tuned-a-decode.json", R"({"settings": {}})");
  dir.write("tuned-b-prefill.json", R"({"settings": {}})");
  const auto missing = load_profile("tuned-c-decode", dir.path());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ExitCode::usage);
  const std::string& message = missing.error().message;
  for (const auto& [name, text] : builtin_profiles()) {
    EXPECT_TRUE(testing::contains(message, name)) << message;
  }
  EXPECT_TRUE(testing::contains(message, "tuned-a-decode, tuned-b-prefill")) << message;
  // Without any profile of the user's, it says where tune would put one.
  testing::TempDir empty;
  const auto none = load_profile("tuned-c-decode", empty.path() / "profiles");
  ASSERT_FALSE(none);
  EXPECT_TRUE(testing::contains(none.error().message, "gb10tune tune")) << none.error().message;
}

}  // namespace
}  // namespace gb10tune::launch
