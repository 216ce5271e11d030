// launch --foreground: the real binary becomes the stand-in llama-server (the same pid), with
// the clean environment and the state record that stop reads; and it refuses what launch
// refuses, with the same message and exit code, before anything runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <thread>

#include "gb10tune/http/http_client.hpp"
#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "support/background_run.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

// Polls /health on 127.0.0.1:`port` until it answers 200 (true) or `run` ends or 20 s pass.
bool foreground_ready(BackgroundRun& run, int port) {
  const http::Url url{"http", "127.0.0.1", port, ""};
  for (int i = 0; i < 400; ++i) {
    if (run.child->poll()) {
      return false;
    }
    const auto answer = http::http_get(url, "/health", 500ms);
    if (answer && answer->status == 200) {
      return true;
    }
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// The stand-in's arguments for a foreground launch of a tiny model in `dir` on `port`.
std::vector<std::string> foreground_args(const TempDir& dir, int port) {
  const auto model = dir.path() / "m.gguf";
  tiny_qwen35_model().write(model);
  auto args = stand_in_launch_args(model.string(), port);
  args.insert(args.begin() + 1, "--foreground");
  return args;
}

TEST(CliLaunchForeground, BecomesTheServerWithTheCleanEnvironmentAndStopEndsIt) {
  if (!std::string_view(GB10TUNE_TEST_EMULATOR).empty()) {
    // Seen with qemu-user 7.2: it answers a program's own /proc/self/stat with a start time of
    // its own making (stop then takes the server for another process), and the server the
    // emulated gb10tune becomes starts with SIGINT and SIGTERM blocked.
    GTEST_SKIP() << "under an emulator (" GB10TUNE_TEST_EMULATOR
                    "), a process that execs "
                    "itself into the server cannot be recognised or stopped; the native runs "
                    "check it";
  }
  TempDir dir;
  const int port = free_tcp_port();
  const auto state = dir.path() / "state";
  const auto seen = dir.path() / "seen.json";
  BackgroundRun run(foreground_args(dir, port),
                    {{"XDG_STATE_HOME", state.string()},
                     {"XDG_CONFIG_HOME", (dir.path() / "config").string()},
                     {"STANDIN_LOAD_MS", "100"},
                     {"STANDIN_RECORD", seen.string()},
                     {"GGML_CUDA_ENABLE_UNIFIED_MEMORY", "0"}});
  ASSERT_TRUE(run.child);
  const int pid = run.child->pid();
  ASSERT_TRUE(foreground_ready(run, port)) << read_text(run.output);

  // The process gb10tune was is now llama-server: same pid, its executable, its environment.
  const auto server = std::filesystem::canonical(stand_in_server_path()).string();
  const auto exe = sys::read_process_exe(platform::Sysroot(), pid);
  ASSERT_TRUE(exe);
  EXPECT_EQ(exe->path, server);
  const nlohmann::json ran = read_record(seen);
  EXPECT_EQ(ran["pid"], pid);
  EXPECT_FALSE(ran["env"].contains("GGML_CUDA_ENABLE_UNIFIED_MEMORY")) << ran["env"].dump();
  const std::string said = read_text(run.output);
  EXPECT_TRUE(contains(said, "removed GGML_CUDA_ENABLE_UNIFIED_MEMORY=0")) << said;
  EXPECT_TRUE(contains(said, "runs in the foreground as pid " + std::to_string(pid))) << said;

  // The state names it, as a detached launch's would.
  const launch::StatePaths paths = launch::StatePaths::under(state / "gb10tune");
  EXPECT_EQ(read_text(paths.pid_file), std::to_string(pid) + "\n");
  const auto record = launch::read_launch_record(paths.record);
  ASSERT_TRUE(record) << record.error().message;
  EXPECT_EQ(record->pid, pid);
  EXPECT_EQ(record->server_path, server);
  EXPECT_EQ(record->url, "http://127.0.0.1:" + std::to_string(port));
  EXPECT_TRUE(record->log_path.empty()) << record->log_path;  // the output stayed with us
  EXPECT_TRUE(record->foreground);  // watch --restart leaves it to the supervisor

  // stop finds it and ends it; the supervisor (this test) gets the server's own exit.
  const auto stopped = run_binary({"stop"}, {"XDG_STATE_HOME=" + state.string()});
  EXPECT_EQ(stopped.exit_code, 0) << stopped.out;
  const auto exit = run.wait(20s);
  ASSERT_TRUE(exit) << "the server outlived stop";
  EXPECT_EQ(exit->signal, 0);
  EXPECT_EQ(exit->exit_status, 0) << read_text(run.output);
  EXPECT_FALSE(std::filesystem::exists(paths.pid_file));
}

TEST(CliLaunchForeground, LogSendsTheServerOutputToTheFileAndTheRecordNamesIt) {
  TempDir dir;
  const int port = free_tcp_port();
  const auto state = dir.path() / "state";
  const auto log = dir.path() / "server.log";
  auto args = foreground_args(dir, port);
  args.insert(args.end(), {"--log", log.string()});
  BackgroundRun run(args, {{"XDG_STATE_HOME", state.string()},
                           {"XDG_CONFIG_HOME", (dir.path() / "config").string()},
                           {"STANDIN_LOAD_MS", "100"}});
  ASSERT_TRUE(run.child);
  ASSERT_TRUE(foreground_ready(run, port)) << read_text(run.output);
  const std::string text = read_text(log);
  EXPECT_TRUE(contains(text, "==== gb10tune")) << text;
  EXPECT_TRUE(contains(text, "model loaded")) << text;
  EXPECT_FALSE(contains(read_text(run.output), "model loaded")) << read_text(run.output);
  const auto record =
      launch::read_launch_record(launch::StatePaths::under(state / "gb10tune").record);
  ASSERT_TRUE(record) << record.error().message;
  EXPECT_EQ(record->log_path, log.string());
}

// In-process: a refused foreground launch never reaches the exec.
TEST(CliLaunchForeground, RefusesWhatLaunchRefusesWithTheSameWordsAndCode) {
  TempDir dir;
  platform::Environment env;
  env.set("XDG_STATE_HOME", (dir.path() / "state").string());
  const auto paths = launch::StatePaths::under(dir.path() / "state" / "gb10tune");
  auto args = foreground_args(dir, free_tcp_port());
  // No machine keeps 1000 GB for the system: the plan does not fit (exit 3).
  *(std::find(args.begin(), args.end(), "--reserve") + 1) = "1000GB";
  args.emplace_back("--no-fit");
  auto launched = args;
  launched.erase(launched.begin() + 1);
  const auto foreground = run_cli_on("gb10", args, env);
  const auto plain = run_cli_on("gb10", launched, env);
  EXPECT_EQ(foreground.exit_code, 3) << foreground.err;
  EXPECT_EQ(foreground.exit_code, plain.exit_code);
  EXPECT_EQ(foreground.err, plain.err);
  EXPECT_EQ(foreground.out, plain.out);
  EXPECT_FALSE(std::filesystem::exists(paths.pid_file));

  // A llama-server that is not there: the same refusal too.
  args = foreground_args(dir, free_tcp_port());
  const auto missing = (dir.path() / "no" / "llama-server").string();
  std::replace(args.begin(), args.end(), stand_in_server_path().string(), missing);
  launched = args;
  launched.erase(launched.begin() + 1);
  const auto foreground_missing = run_cli_on("gb10", args, env);
  const auto plain_missing = run_cli_on("gb10", launched, env);
  EXPECT_NE(foreground_missing.exit_code, 0);
  EXPECT_EQ(foreground_missing.exit_code, plain_missing.exit_code) << foreground_missing.err;
  EXPECT_EQ(foreground_missing.err, plain_missing.err);
  EXPECT_TRUE(contains(foreground_missing.err, missing)) << foreground_missing.err;
}

TEST(CliLaunchForeground, NeitherDryRunNorPrintNorJson) {
  for (const char* other : {"--dry-run", "--json"}) {
    const auto result = run_cli_on("gb10", {"launch", "--foreground", other}, {});
    EXPECT_EQ(result.exit_code, 2) << other << ": " << result.err;
    EXPECT_TRUE(contains(result.err, "excludes")) << result.err;
  }
  const auto print = run_cli_on("gb10", {"launch", "--foreground", "--print", "systemd"}, {});
  EXPECT_EQ(print.exit_code, 2) << print.err;
  const auto log = run_cli_on("gb10", {"launch", "--log", "/tmp/x.log"}, {});
  EXPECT_EQ(log.exit_code, 2) << log.err;
}

}  // namespace
}  // namespace gb10tune::testing
