// SIGINT and SIGTERM end a long-running command with 128 + the signal (130, 143), and launch
// stops the server it was waiting for either way.
#include <gtest/gtest.h>

#include <csignal>

#include "support/background_run.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

// Waits up to 60 s for `path` to hold a pid; 0 when it does not.
int wait_for_pid_file(const std::filesystem::path& path) {
  int pid = 0;
  wait_until(
      [&] {
        std::error_code ec;
        if (std::filesystem::exists(path, ec)) {
          const std::string text = read_text(path);
          if (!text.empty() && text.back() == '\n') {
            pid = std::stoi(text);
          }
        }
        return pid > 0;
      },
      60s);
  return pid;
}

// launch waiting for a stand-in that loads for a minute, ended by `signal`: the exit code,
// the server stopped, its pid file gone.
void expect_launch_ends_on(int signal, int code) {
  TempDir dir;
  const auto model = dir.path() / "m.gguf";
  tiny_qwen35_model().write(model);
  const auto state = dir.path() / "state";
  BackgroundRun run(stand_in_launch_args(model.string()),
                    {{"XDG_STATE_HOME", state.string()},
                     {"XDG_CONFIG_HOME", (dir.path() / "config").string()},
                     {"STANDIN_LOAD_MS", "60000"}});
  ASSERT_TRUE(run.child);
  const auto pid_file = state / "gb10tune" / "llama-server.pid";
  const int server = wait_for_pid_file(pid_file);
  ASSERT_GT(server, 0) << read_text(run.output);
  EXPECT_TRUE(process_alive(server));
  // Into the readiness wait: the server is loading (its 60 s load has begun), and launch,
  // which wrote the pid file just before its wait, now polls /health.
  const auto log = state / "gb10tune" / "llama-server.log";
  ASSERT_TRUE(wait_until([&] { return file_contains(log, "loading model '"); }, 60s))
      << read_text(run.output);
  run.child->signal(signal);
  const auto exit = run.wait(20s);
  ASSERT_TRUE(exit) << "launch did not end on signal " << signal;
  EXPECT_EQ(exit->exit_status, code) << read_text(run.output);
  EXPECT_FALSE(process_alive(server)) << "the server outlived launch";
  EXPECT_FALSE(std::filesystem::exists(pid_file));
  EXPECT_TRUE(contains(read_text(run.output), "interrupted")) << read_text(run.output);
}

TEST(CliSignals, SigtermEndsLaunchWith143AndStopsTheServer) {
  expect_launch_ends_on(SIGTERM, 143);
}

TEST(CliSignals, SigintEndsLaunchWith130AndStopsTheServer) {
  expect_launch_ends_on(SIGINT, 130);
}

TEST(CliSignals, SigtermEndsWatchWith143) {
  TempDir dir;
  BackgroundRun run({"watch", "--wait"}, {{"XDG_STATE_HOME", dir.path().string()}});
  ASSERT_TRUE(run.child);
  // Started: it says it waits for a launch.
  ASSERT_TRUE(run.wait_for_output("waiting", 60s)) << read_text(run.output);
  run.child->signal(SIGTERM);
  const auto exit = run.wait(20s);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_status, 143) << read_text(run.output);
}

}  // namespace
}  // namespace gb10tune::testing
