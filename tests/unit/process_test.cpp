#include "gb10tune/platform/process.hpp"

#include <gtest/gtest.h>

namespace gb10tune::platform {
namespace {

using namespace std::chrono_literals;

TEST(Process, CapturesStdoutAndStderrAndExitCode) {
  const auto run = run_capture({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 10s);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->exit_status, 3);
  EXPECT_NE(run->output.find("out"), std::string::npos);
  EXPECT_NE(run->output.find("err"), std::string::npos);
  EXPECT_FALSE(run->timed_out);
}

TEST(Process, KillsAfterTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const auto run = run_capture({"/bin/sh", "-c", "sleep 30"}, 200ms);
  ASSERT_TRUE(run);
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->signal, 9);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(Process, AProgramThatClosesItsOutputAndRunsOnIsKilledAtTheDeadline) {
  // The end of the output is not the end of the program: the wait for its exit is bounded too.
  const auto start = std::chrono::steady_clock::now();
  const auto run = run_capture({"/bin/sh", "-c", "echo bye; exec >&- 2>&-; sleep 12"}, 1s);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_LT(elapsed, 4s);
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->signal, 9);
  EXPECT_NE(run->output.find("bye"), std::string::npos) << run->output;
}

TEST(Process, AProgramThatClosesItsOutputAndExitsIsNotATimeout) {
  const auto run = run_capture({"/bin/sh", "-c", "echo bye; exec >&- 2>&-; sleep 0.2; exit 4"}, 5s);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_FALSE(run->timed_out);
  EXPECT_EQ(run->exit_status, 4);
}

TEST(Process, MissingProgramIsAnError) {
  const auto run = run_capture({"/nonexistent/program"}, 1s);
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().message.find("/nonexistent/program"), std::string::npos);
}

TEST(Process, OutputIsCappedAndStdinIsEmpty) {
  const auto run = run_capture({"/bin/sh", "-c", "head -c 100000 /dev/zero; cat"}, 10s, 1000);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->output.size(), 1000u);
  EXPECT_EQ(run->exit_status, 0);
}

}  // namespace
}  // namespace gb10tune::platform
