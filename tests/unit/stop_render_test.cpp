// What `gb10tune stop` prints, from a StopOutcome alone: the text and the --json document.
#include "gb10tune/render/stop_render.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gb10tune::render {
namespace {

// A stop of the pid file's server that took 1.5 s, with an RPC worker it used left running.
launch::StopOutcome stopped_with_worker() {
  launch::StopOutcome outcome;
  outcome.pid_file.state = launch::PidFileState::running;
  outcome.pid_file.pid = 4242;
  outcome.pid_file_path = "/state/llama-server.pid";
  launch::StopEntry entry;
  entry.pid = 4242;
  entry.exe = "/opt/llama.cpp/bin/llama-server";
  entry.launched = true;
  entry.stopped = true;
  entry.took = std::chrono::milliseconds(1500);
  outcome.entries.push_back(entry);
  outcome.rpc_workers.push_back("192.168.100.2:50052");
  return outcome;
}

TEST(StopRender, TextSaysWhatStoppedAndWhichWorkersKeepRunning) {
  const std::string text = render_stop_text(stopped_with_worker());
  EXPECT_EQ(text,
            "stopped llama-server (pid 4242): ended on SIGTERM after 1.5 s\n"
            "RPC worker 192.168.100.2:50052 keeps running: stop it there with `gb10tune rpc stop "
            "--port 50052`\n");
}

TEST(StopRender, JsonNamesThePidFileTheProcessesAndTheWorkers) {
  const nlohmann::json doc = stop_to_json(stopped_with_worker());
  EXPECT_EQ(doc["command"], "stop");
  EXPECT_EQ(doc["pid_file"]["state"], "running");
  EXPECT_EQ(doc["pid_file"]["pid"], 4242);
  EXPECT_EQ(doc["pid_file"]["removed"], false);
  ASSERT_EQ(doc["processes"].size(), 1u);
  EXPECT_EQ(doc["processes"][0]["started_by_launch"], true);
  EXPECT_EQ(doc["processes"][0]["took_ms"], 1500);
  EXPECT_FALSE(doc["processes"][0].contains("message"));
  EXPECT_EQ(doc["rpc_workers_left_running"][0], "192.168.100.2:50052");
  EXPECT_FALSE(doc.contains("error"));
}

TEST(StopRender, AProcessNotStoppedIsAFailureInBothForms) {
  launch::StopOutcome outcome;
  launch::StopEntry entry;
  entry.pid = 77;
  entry.message = "operation not permitted";
  outcome.entries.push_back(entry);
  EXPECT_EQ(render_stop_text(outcome),
            "could not stop llama-server (pid 77): operation not permitted\n");
  const nlohmann::json doc = stop_to_json(outcome);
  EXPECT_EQ(doc["processes"][0]["message"], "operation not permitted");
  EXPECT_EQ(doc["error"], "a process could not be stopped");
}

TEST(StopRender, NothingRunningSaysSo) {
  EXPECT_EQ(render_stop_text(launch::StopOutcome{}),
            "no llama-server started by gb10tune is running\n");
  launch::StopOutcome all;
  all.all = true;
  all.skipped_other_users = 2;
  EXPECT_EQ(render_stop_text(all),
            "no llama-server of yours is running\n"
            "2 llama-server process(es) of other users left alone\n");
}

}  // namespace
}  // namespace gb10tune::render
