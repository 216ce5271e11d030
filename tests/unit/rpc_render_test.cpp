// What `gb10tune rpc start|stop|status` prints, from their results alone: the text and the --json
// documents.
#include "gb10tune/render/rpc_render.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gb10tune::render {
namespace {

// A worker of protocol 3.0.0 with one device: 2 GiB free of 4 GiB.
rpc::WorkerInfo one_device_worker() {
  rpc::WorkerInfo info;
  info.endpoint = {"192.168.100.2", 50052};
  info.version.major = 3;
  rpc::DeviceMemory memory;
  memory.free_bytes = 2ull << 30;
  memory.total_bytes = 4ull << 30;
  info.devices.push_back(memory);
  return info;
}

TEST(RpcRender, WorkerAnswerAsTextAndJson) {
  EXPECT_EQ(render_worker_text(one_device_worker()),
            "  protocol: 3.0.0\n  device 0: 2.00 GiB free of 4.00 GiB\n");
  const nlohmann::json json = worker_to_json(one_device_worker());
  EXPECT_EQ(json["endpoint"], "192.168.100.2:50052");
  EXPECT_EQ(json["protocol_version"], "3.0.0");
  EXPECT_EQ(json["devices"][0]["free_bytes"], 2ull << 30);
}

TEST(RpcRender, StartSaysHowToUseAndStopTheWorker) {
  rpc::StartedWorker started;
  started.pid = 99;
  started.argv = {"rpc-server", "-H", "192.168.100.2", "-p", "50052"};
  started.log = "/state/rpc-50052.log";
  started.to_ready = std::chrono::milliseconds(2500);
  started.info = one_device_worker();
  const std::string text = render_rpc_start_text(started, "192.168.100.2:50052", 50052);
  EXPECT_TRUE(text.starts_with("RPC worker ready at 192.168.100.2:50052 (pid 99, after 2.5 s)\n"))
      << text;
  EXPECT_NE(text.find("  command: rpc-server -H 192.168.100.2 -p 50052\n"), std::string::npos);
  EXPECT_NE(text.find("  stop:    gb10tune rpc stop --port 50052\n"), std::string::npos);
  const nlohmann::json doc = rpc_start_to_json(started, "192.168.100.2:50052");
  EXPECT_EQ(doc["command"], "rpc start");
  EXPECT_EQ(doc["pid"], 99);
  EXPECT_EQ(doc["ready_after_ms"], 2500);
  EXPECT_EQ(doc["worker"]["protocol_version"], "3.0.0");
}

TEST(RpcRender, StopWithAndWithoutAWorker) {
  EXPECT_EQ(render_rpc_stop_text(50052, nullptr),
            "no RPC worker started by gb10tune runs on port 50052\n");
  const nlohmann::json none = rpc_stop_to_json(50052, nullptr);
  EXPECT_EQ(none["stopped"], false);
  EXPECT_EQ(none["running"], false);
  EXPECT_FALSE(none.contains("pid"));
  launch::StopResult stopped;
  stopped.pid = 99;
  stopped.killed = true;
  EXPECT_EQ(render_rpc_stop_text(50052, &stopped),
            "stopped the RPC worker on port 50052 (pid 99, needed SIGKILL)\n");
  const nlohmann::json doc = rpc_stop_to_json(50052, &stopped);
  EXPECT_EQ(doc["command"], "rpc stop");
  EXPECT_EQ(doc["stopped"], true);
  EXPECT_EQ(doc["killed"], true);
  EXPECT_FALSE(doc.contains("running"));
}

TEST(RpcRender, StatusOfABusyWorkerIsNotAnAnswer) {
  RpcStatusView status;
  status.endpoint = "127.0.0.1:50052";
  status.started_by_gb10tune = true;
  status.pid = 99;
  status.log = "/state/rpc-50052.log";
  status.busy = "serving a client";
  EXPECT_EQ(render_rpc_status_text(status),
            "RPC worker 127.0.0.1:50052 started by gb10tune: pid 99, serving a client\n");
  const nlohmann::json doc = rpc_status_to_json(status);
  EXPECT_EQ(doc["busy"], true);
  EXPECT_TRUE(doc["answers"].is_null());
  EXPECT_EQ(doc["note"], "serving a client");
  EXPECT_FALSE(doc.contains("error"));
}

TEST(RpcRender, StatusOfAWorkerThatAnswersOrNot) {
  RpcStatusView answered;
  answered.endpoint = "192.168.100.2:50052";
  answered.info = one_device_worker();
  EXPECT_EQ(render_rpc_status_text(answered),
            "RPC worker 192.168.100.2:50052 answers\n  protocol: 3.0.0\n"
            "  device 0: 2.00 GiB free of 4.00 GiB\n");
  const nlohmann::json doc = rpc_status_to_json(answered);
  EXPECT_EQ(doc["answers"], true);
  EXPECT_EQ(doc["started_by_gb10tune"], false);
  EXPECT_FALSE(doc.contains("pid"));

  RpcStatusView silent;
  silent.endpoint = "192.168.100.2:50052";
  silent.error = "connection refused";
  EXPECT_EQ(render_rpc_status_text(silent),
            "RPC worker 192.168.100.2:50052 does not answer: connection refused\n");
  const nlohmann::json failed = rpc_status_to_json(silent);
  EXPECT_EQ(failed["answers"], false);
  EXPECT_EQ(failed["error"], "connection refused");
}

}  // namespace
}  // namespace gb10tune::render
