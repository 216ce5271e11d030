// cmake --install of this build into a scratch prefix: the systemd user unit template names
// the installed gb10tune and runs it in the foreground with the instance's configuration, read
// back as systemd reads it (and by systemd-analyze where it is installed), beside its example.
#include <gtest/gtest.h>

#include "gb10tune/platform/process.hpp"
#include "support/systemd_unit_reader.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {
namespace {

// Installs this build under `prefix`; fails the test when cmake --install does.
bool install_into(const std::filesystem::path& prefix) {
  const auto run = platform::run_capture(
      {GB10TUNE_CMAKE_COMMAND, "--install", GB10TUNE_BUILD_DIR, "--prefix", prefix.string()},
      std::chrono::seconds(120));
  EXPECT_TRUE(run) << run.error().message;
  EXPECT_TRUE(run && run->exit_status == 0) << (run ? run->output : std::string());
  return run && run->exit_status == 0;
}

TEST(CliInstall, TheUnitTemplateRunsTheInstalledGb10tuneInTheForeground) {
  TempDir dir;
  const auto prefix = dir.path() / "usr";
  ASSERT_TRUE(install_into(prefix));
  const auto unit_path = prefix / "lib/systemd/user/gb10tune@.service";
  const auto example = prefix / "share/gb10tune/units/example.conf";
  ASSERT_TRUE(std::filesystem::exists(unit_path));
  ASSERT_TRUE(std::filesystem::exists(example));
  const std::string unit = read_text(unit_path);

  const UnitReading reading = read_unit(unit);
  std::vector<std::string> problems = reading.problems;
  const auto exec = reading.values("Service", "ExecStart");
  ASSERT_EQ(exec.size(), 1u) << unit;
  // ${MODEL} one word, $ARGS split at blanks: the two variables the template means to use.
  EXPECT_EQ(unit_words(exec[0], problems),
            (std::vector<std::string>{(prefix / "bin/gb10tune").string(), "launch", "--foreground",
                                      "--model", "${MODEL}", "$ARGS"}));
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems) << "\n" << unit;
  EXPECT_EQ(reading.values("Service", "EnvironmentFile"),
            std::vector<std::string>{"%E/gb10tune/units/%i.conf"});
  EXPECT_EQ(reading.values("Service", "Restart"), std::vector<std::string>{"on-failure"});
  EXPECT_EQ(reading.values("Service", "TimeoutStopSec"), std::vector<std::string>{"60"});
  EXPECT_EQ(reading.values("Install", "WantedBy"), std::vector<std::string>{"default.target"});
  EXPECT_TRUE(contains(unit, example.string())) << unit;
  // The example sets both variables.
  const std::string conf = read_text(example);
  EXPECT_TRUE(contains(conf, "\nMODEL=/")) << conf;
  EXPECT_TRUE(contains(conf, "\nARGS=--")) << conf;

  // systemd-analyze runs `man` on Documentation=: the installed page must be what it finds.
  const ScopedEnv manpath("MANPATH", (prefix / "share/man").string());
  std::string why;
  const auto analyzed = systemd_analyze(dir.path(), "gb10tune@example.service", unit, why);
  if (!analyzed) {
    ASSERT_FALSE(systemd_analyze_required()) << "GB10TUNE_REQUIRE_SYSTEMD=1: " << why;
    GTEST_SKIP() << "systemd-analyze verify was not run: " << why
                 << " (the unit was checked by the tests' own reader above)";
  }
  // Nothing refused: the only lines about the unit are its debug note of the man page found
  // and the reader's remarks on the dumped command line, which holds the two variables.
  for (const std::string& warning : analyzed->warnings) {
    EXPECT_TRUE(contains(warning, "refers to a variable") ||
                contains(warning, "Found documentation item: man:gb10tune-launch(1)"))
        << warning;
  }
  EXPECT_EQ(analyzed->argv.size(), 6u) << analyzed->output;
  EXPECT_EQ(analyzed->description, "llama-server for example, planned by gb10tune at each start");
}

}  // namespace
}  // namespace gb10tune::testing
