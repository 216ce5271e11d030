#include "gb10tune/server/system_info.hpp"

#include <gtest/gtest.h>

#include "gb10tune/verify/checks.hpp"
#include "support/test_context.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune {
namespace {

using testing::fixture;
using testing::read_text;

// The x86 CPU of the machine the 3f545be fixtures were captured on.
sys::CpuInfo capture_cpu() {
  sys::CpuInfo cpu;
  cpu.family = sys::CpuFamily::x86;
  cpu.features = {"avx2", "fma", "f16c"};
  return cpu;
}

// The default-verbosity (3) log of the 2026-08 build: the line is not there.
TEST(SystemInfo, CurrentBuildDefaultLogHasNoLine) {
  const std::string log = read_text(fixture("llama-server/log-cpu-ngl99-default-3f545be.txt"));
  EXPECT_FALSE(server::find_system_info_line(server::last_run_of_log(log)));
  const std::string lv4 = read_text(fixture("llama-server/log-cpu-ngl99-lv4-3f545be.txt"));
  EXPECT_TRUE(server::find_system_info_line(server::last_run_of_log(lv4)));
}

// An appended-to log: an earlier start at -lv 4 printed the line, the last one (default
// verbosity) did not; the earlier line does not describe the running server.
TEST(SystemInfo, LastRunStartsAtTheCurrentBuildsMarker) {
  const std::string lv4 = read_text(fixture("llama-server/log-cpu-ngl99-lv4-3f545be.txt"));
  const std::string def = read_text(fixture("llama-server/log-cpu-ngl99-default-3f545be.txt"));
  const std::string appended = lv4 + def;  // the view below points into it
  const std::string_view last = server::last_run_of_log(appended);
  EXPECT_EQ(last, def);
  EXPECT_FALSE(server::find_system_info_line(last));
}

// Older builds print no marker but the line at every start: the run begins at the last one.
TEST(SystemInfo, OldFormatLogKeepsItsLine) {
  const std::string old =
      read_text(testing::sysroot_fixture("verify-clean") / "var/log/llama-server.log");
  const auto line = server::find_system_info_line(server::last_run_of_log(old));
  ASSERT_TRUE(line);
  EXPECT_EQ(line->substr(0, 12), "system_info:");
  EXPECT_NE(line->find("MATMUL_INT8 = 1"), std::string_view::npos);
}

// What the real 2026-08 binary printed when run as read_build_system_info runs it.
TEST(SystemInfo, ProbeOutputOfTheCurrentBuildHoldsTheLine) {
  const std::string out = read_text(fixture("llama-server/sysinfo-probe-3f545be.txt"));
  const auto line = server::find_system_info_line(out);
  ASSERT_TRUE(line);
  const auto features = verify::parse_system_info_features(*line);
  EXPECT_EQ(features, (std::vector<std::string>{"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA",
                                                "BMI2", "LLAMAFILE", "OPENMP", "REPACK"}));
}

// A fake binary that prints the captured output only when called the way the probe calls it.
TEST(SystemInfo, ReadsTheLineFromTheBinary) {
  testing::TempDir dir;
  const auto out =
      dir.write("out.txt", read_text(fixture("llama-server/sysinfo-probe-3f545be.txt")));
  const auto bin = dir.write("llama-server",
                             "#!/bin/sh\n"
                             "[ \"$1 $2 $3\" = \"-lv 4 -m\" ] || exit 3\n"
                             "case \"$6\" in *.sock) ;; *) exit 4 ;; esac\n"
                             "[ -e \"$4\" ] && exit 5\n"
                             "cat '" +
                                 out.string() + "'\nexit 1\n",
                             true);
  const auto line = server::read_build_system_info(bin.string(), std::chrono::seconds(10));
  ASSERT_TRUE(line) << line.error().message;
  EXPECT_EQ(line->substr(0, 30), "system_info: n_threads = 2 (n_");

  const auto silent =
      dir.write("old-server", "#!/bin/sh\necho 'error: unknown argument: -lv'\nexit 1\n", true);
  const auto missing = server::read_build_system_info(silent.string(), std::chrono::seconds(10));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("unknown argument"), std::string::npos);
}

// Issue 22 item 1: -lv 4 is never run on a binary others could replace.
TEST(SystemInfo, BinaryOthersCouldReplaceIsNotRun) {
  testing::TempDir dir;
  const auto ran = dir.path() / "ran";
  const auto bin = testing::marker_script_in_open_dir(dir, "llama-server", ran,
                                                      "system_info: n_threads = 2 | AVX2 = 1 |");
  const auto line = server::read_build_system_info(bin.string(), std::chrono::seconds(10));
  ASSERT_FALSE(line);
  EXPECT_NE(line.error().message.find("refusing to run " + bin.string()), std::string::npos)
      << line.error().message;
  EXPECT_FALSE(std::filesystem::exists(ran));
}

TEST(SystemInfo, CheckUsesTheBinaryWhenTheLogHasNoLine) {
  const sys::CpuInfo cpu = capture_cpu();
  const std::string def = read_text(fixture("llama-server/log-cpu-ngl99-default-3f545be.txt"));
  const std::string probe = read_text(fixture("llama-server/sysinfo-probe-3f545be.txt"));
  verify::LogCheckSources sources;
  sources.launched = true;
  int asked = 0;
  sources.binary_system_info = [&]() -> Expected<std::string> {
    ++asked;
    return std::string(*server::find_system_info_line(probe));
  };
  const auto findings = verify::check_log(def, "server.log", &cpu, sources);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(findings[0].severity, verify::Severity::ok) << findings[0].evidence;
  EXPECT_NE(findings[0].evidence.find("binary"), std::string::npos) << findings[0].evidence;
  EXPECT_NE(findings[0].evidence.find("AVX2"), std::string::npos) << findings[0].evidence;

  // The line of this start in the log wins; the binary is not run.
  const std::string lv4 = read_text(fixture("llama-server/log-cpu-ngl99-lv4-3f545be.txt"));
  const auto from_log = verify::check_log(lv4, "server.log", &cpu, sources);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(from_log[0].severity, verify::Severity::ok);
  EXPECT_NE(from_log[0].evidence.find("server.log"), std::string::npos);
}

TEST(SystemInfo, BinaryLackingAFeatureFails) {
  const sys::CpuInfo cpu = capture_cpu();
  const std::string def = read_text(fixture("llama-server/log-cpu-ngl99-default-3f545be.txt"));
  verify::LogCheckSources sources;
  sources.binary_system_info = []() -> Expected<std::string> {
    return std::string("system_info: n_threads = 2 / 2 | CPU : SSE3 = 1 | AVX = 1 | F16C = 1 |");
  };
  const auto findings = verify::check_log(def, "server.log", &cpu, sources);
  EXPECT_EQ(findings[0].severity, verify::Severity::fail);
  EXPECT_NE(findings[0].evidence.find("AVX2, FMA"), std::string::npos) << findings[0].evidence;
}

// Without any source: unknown, and a launched server is not told to use launch.
TEST(SystemInfo, UnknownWithoutASourceAndNoLaunchAdviceForALaunchedServer) {
  const sys::CpuInfo cpu = capture_cpu();
  const std::string def = read_text(fixture("llama-server/log-cpu-ngl99-default-3f545be.txt"));
  verify::LogCheckSources sources;
  sources.launched = true;
  sources.binary_system_info = []() -> Expected<std::string> {
    return Error{"the server's executable is unreadable"};
  };
  const auto findings = verify::check_log(def, "server.log", &cpu, sources);
  EXPECT_EQ(findings[0].severity, verify::Severity::warn);
  EXPECT_NE(findings[0].evidence.find("unknown"), std::string::npos);
  EXPECT_NE(findings[0].evidence.find("executable is unreadable"), std::string::npos);
  EXPECT_EQ(findings[0].fix.find("gb10tune launch"), std::string::npos) << findings[0].fix;
  EXPECT_NE(findings[0].fix.find("-lv 4"), std::string::npos) << findings[0].fix;
}

}  // namespace
}  // namespace gb10tune
