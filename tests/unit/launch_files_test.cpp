// The files a launch serves are named by absolute paths, whatever the command line gave: the
// launch record they end up in is read by verify, bench server and tune from any folder.
#include "gb10tune/launch/launch_files.hpp"

#include <gtest/gtest.h>

#include "gb10tune/launch/settings_layers.hpp"
#include "support/test_context.hpp"

namespace gb10tune::launch {
namespace {

namespace fs = std::filesystem;

LaunchSettings settings_with_paths(const nlohmann::json& values) {
  return LaunchSettings::resolve({SettingsLayer{"command line", values}});
}

TEST(LaunchFiles, ARelativeModelAndProjectorBecomeAbsolute) {
  const testing::TempDir dir;
  const fs::path model = dir.write("models/m.gguf", "GGUF");
  const fs::path projector = dir.write("models/p-mmproj.gguf", "GGUF");
  const std::string relative_model = fs::relative(model, fs::current_path()).string();
  ASSERT_FALSE(fs::path(relative_model).is_absolute());
  const platform::Environment env;
  const LaunchSettings settings =
      settings_with_paths({{"model", relative_model},
                           {"mmproj", fs::relative(projector, fs::current_path()).string()}});
  const auto found = find_launch_model(settings, env);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->path, model);
  const auto mmproj = find_launch_projector(settings, found->path, env);
  ASSERT_TRUE(mmproj) << mmproj.error().message;
  EXPECT_EQ(*mmproj, projector.string());
}

TEST(LaunchFiles, ARelativeModelsFolderIsScannedAndNamedAbsolute) {
  const testing::TempDir dir;
  const fs::path model = dir.write("models/only.gguf", "GGUF");
  const LaunchSettings settings = settings_with_paths(
      {{"models_dir", fs::relative(dir.path() / "models", fs::current_path()).string()}});
  const auto found = find_launch_model(settings, platform::Environment());
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->path, model);
}

}  // namespace
}  // namespace gb10tune::launch
