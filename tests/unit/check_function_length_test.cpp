// scripts/check_function_length.sh, CI's check that no function in src/ grows past 120 lines: run
// on small trees (a long function must fail, naming the file, the line and the function) and on
// the project.
#include <gtest/gtest.h>

#include <string>

#include "gb10tune/platform/process.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

// Runs the checker on `root` with a limit of `limit` lines.
platform::CapturedRun check_length_in(const std::filesystem::path& root, int limit = 120) {
  const auto run = platform::run_capture(
      {"bash", std::string(GB10TUNE_SOURCE_DIR) + "/scripts/check_function_length.sh",
       root.string(), std::to_string(limit)},
      60s);
  EXPECT_TRUE(run) << run.error().message;
  return run ? *run : platform::CapturedRun{};
}

// A function of `body_lines` statements (its length: body_lines + 2), named `name`.
std::string function_of(const std::string& name, int body_lines) {
  std::string text = "int " + name + "(int x) {\n";
  for (int i = 0; i < body_lines; ++i) {
    text += "  x += " + std::to_string(i) + ";\n";
  }
  return text + "  return x;\n}\n";
}

TEST(CheckFunctionLength, ShortFunctionsPass) {
  const TempDir dir;
  dir.write("src/core/a.cpp", function_of("short_one", 5) + function_of("another", 8));
  const auto run = check_length_in(dir.path(), 20);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "2 functions of at most 20 lines")) << run.output;
}

TEST(CheckFunctionLength, ALongFunctionFailsNamingTheFileTheLineAndTheFunction) {
  const TempDir dir;
  dir.write("src/core/a.cpp", "// a comment with a { brace\n" + function_of("short_one", 3) +
                                  "namespace ns {\nstruct S {\n  int member(int x) const {\n"
                                  "    const auto f = [](int y) { return y; };\n" +
                                  std::string(20, '\n') +
                                  "    return f(x);\n  }\n};\n}  // namespace ns\n");
  const auto run = check_length_in(dir.path(), 20);
  EXPECT_EQ(run.exit_status, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "src/core/a.cpp:10: member is 24 lines")) << run.output;
  EXPECT_FALSE(contains(run.output, "short_one")) << run.output;
}

TEST(CheckFunctionLength, ADataTableMarkedAsSuchPasses) {
  const TempDir dir;
  std::string table =
      "// function-length: data table\nconst char* const* names() {\n"
      "  static const char* const k[] = {\n";
  for (int i = 0; i < 30; ++i) {
    table += "      \"name " + std::to_string(i) + " { not a brace\",\n";
  }
  dir.write("src/core/table.cpp", table + "  };\n  return k;\n}\n");
  const auto run = check_length_in(dir.path(), 20);
  EXPECT_EQ(run.exit_status, 0) << run.output;
}

TEST(CheckFunctionLength, TheProjectKeepsItsFunctionsShort) {
  const auto run = check_length_in(GB10TUNE_SOURCE_DIR);
  EXPECT_EQ(run.exit_status, 0) << run.output;
}

TEST(CheckFunctionLength, AFolderWithoutSourcesIsAnError) {
  const TempDir dir;
  const auto run = check_length_in(dir.path());
  EXPECT_EQ(run.exit_status, 2) << run.output;
}

}  // namespace
}  // namespace gb10tune::testing
