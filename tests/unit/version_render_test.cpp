// What --version says: the build, CUDA with its architectures, NVML loaded or why not.
#include "gb10tune/render/version_render.hpp"

#include <gtest/gtest.h>

#include <regex>

#include "gb10tune/version.hpp"

namespace gb10tune::render {
namespace {

TEST(VersionReport, NamesTheBuildAndNvml) {
  const BuildInfo build{"0.1.0", "0.1.0+gabc1234-dirty", "abc1234-dirty", "Release",
                        true,    "90-real;121-real"};
  platform::NvmlReport nvml;
  nvml.loaded = true;
  nvml.detail = "libnvidia-ml.so.1";
  nvml.driver_version = "580.95.05";
  const VersionReport report = make_version_report(build, nvml);
  const std::string text = render_version_text(report);
  EXPECT_TRUE(text.starts_with("gb10tune 0.1.0+gabc1234-dirty\n"));
  EXPECT_NE(text.find("git          abc1234-dirty"), std::string::npos);
  EXPECT_NE(text.find("build type   Release"), std::string::npos);
  EXPECT_NE(text.find("CUDA         on (architectures 90-real;121-real)"), std::string::npos);
  EXPECT_NE(text.find("NVML         loaded (libnvidia-ml.so.1), driver 580.95.05"),
            std::string::npos);
  const nlohmann::json doc = version_json(report);
  EXPECT_EQ(doc["command"], "version");
  EXPECT_EQ(doc["build"]["version"], "0.1.0+gabc1234-dirty");
  EXPECT_EQ(doc["build"]["cuda"], true);
  EXPECT_EQ(doc["build"]["cuda_architectures"], nlohmann::json({"90-real", "121-real"}));
  EXPECT_EQ(doc["nvml"]["loaded"], true);
  EXPECT_EQ(doc["nvml"]["driver_version"], "580.95.05");
}

TEST(VersionReport, SaysWhatIsMissing) {
  const BuildInfo build{"0.1.0", "0.1.0", "", "Debug", false, ""};
  platform::NvmlReport nvml;
  nvml.detail = "NVML not loaded: libnvidia-ml.so.1: cannot open shared object file";
  nvml.driver_version = "ignored when not loaded";
  const VersionReport report = make_version_report(build, nvml);
  const std::string text = render_version_text(report);
  EXPECT_NE(text.find("git          not built from a git checkout"), std::string::npos);
  EXPECT_NE(text.find("CUDA         off (built without CUDA)"), std::string::npos);
  EXPECT_NE(text.find("NVML         not loaded: libnvidia-ml.so.1: cannot open"),
            std::string::npos);
  const nlohmann::json doc = version_json(report);
  EXPECT_TRUE(doc["build"]["git_describe"].is_null());
  EXPECT_TRUE(doc["build"]["cuda_architectures"].empty());
  EXPECT_TRUE(doc["nvml"]["driver_version"].is_null());
}

TEST(VersionReport, TheToolVersionIsTheProjectVersion) {
  // kToolVersion (in every JSON document) and CMake's project() version are kept by hand: both
  // are 0.1.0 (CMakeLists.txt `project(gb10tune VERSION 0.1.0 …)`, include/gb10tune/version.hpp).
  EXPECT_EQ(build_info().project_version, "0.1.0");
  EXPECT_EQ(kToolVersion, "0.1.0");
}

// The version of this very build, from what cmake/version.cmake found at configure time: outside
// a git checkout the project version alone; in a checkout without tags (a clone of main, as in
// CI) `git describe --always --dirty` is the abbreviated commit, and the version is
// "0.1.0+g<commit>[-dirty]"; with a tag it is the tag without its "v".
TEST(VersionReport, ThisBuildsVersionNamesTheCheckoutItWasBuiltFrom) {
  const std::string describe(build_info().git_describe);
  const std::string version(build_info().version);
  if (describe.empty()) {
    EXPECT_EQ(version, "0.1.0");
  } else if (std::regex_match(describe, std::regex("[0-9a-f]{7,40}(-dirty)?"))) {
    EXPECT_EQ(version, "0.1.0+g" + describe);
  } else {
    // A tag: "v0.2.0", "v0.2.0-3-gabc1234", "v0.2.0-dirty".
    ASSERT_TRUE(std::regex_match(describe, std::regex(R"(v?\d+\.\d+\.\d+.*)"))) << describe;
    EXPECT_EQ(version, describe.starts_with('v') ? describe.substr(1) : describe);
  }
}

}  // namespace
}  // namespace gb10tune::render
