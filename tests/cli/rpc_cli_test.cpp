// `gb10tune rpc start|stop|status` run as the real binary against the stand-in rpc-server,
// with XDG_STATE_HOME in a temporary directory (run_binary merges stdout and stderr).
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/platform/tcp_connection.hpp"
#include "gb10tune/rpc/rpc_protocol.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "support/held_port.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune::testing {
namespace {

struct RpcFixture {
  TempDir dir;
  std::vector<std::string> env{"XDG_STATE_HOME=" + dir.path().string(),
                               "STANDIN_RPC_RECORD=" + (dir.path() / "record.txt").string(),
                               "GGML_CUDA_ENABLE_UNIFIED_MEMORY=0"};
  std::string bin = GB10TUNE_STAND_IN_RPC_SERVER;
  std::vector<std::string> started_ports;  // stopped on destruction, even after a failure

  ~RpcFixture() {
    for (const auto& port : started_ports) {
      run_binary({"rpc", "stop", "--port", port, "--timeout", "5"}, env);
    }
  }

  CliResult rpc(std::vector<std::string> args, std::vector<std::string> extra = {}) const {
    args.insert(args.begin(), "rpc");
    auto changes = env;
    changes.insert(changes.end(), extra.begin(), extra.end());
    return run_binary(args, changes);
  }
};

TEST(CliRpc, StartStatusStopAgainstTheStandIn) {
  RpcFixture f;
  const std::string port = std::to_string(free_tcp_port());
  f.started_ports.push_back(port);
  auto started = f.rpc({"start", "--port", port, "--server-bin", f.bin, "--cache", "--json"});
  ASSERT_EQ(started.exit_code, 0) << started.out << started.out;
  const auto doc = nlohmann::json::parse(started.out.substr(started.out.find("{\n")));
  const int pid = doc.at("pid").get<int>();
  EXPECT_TRUE(process_alive(pid));
  EXPECT_EQ(doc.at("worker").at("protocol_version"), "5.1.0");
  EXPECT_EQ(doc.at("worker").at("devices").at(0).at("free_bytes"), 20ull << 30);
  EXPECT_EQ(doc.at("env_removed"), nlohmann::json::array({"GGML_CUDA_ENABLE_UNIFIED_MEMORY"}));
  EXPECT_TRUE(contains(started.out, "removed GGML_CUDA_ENABLE_UNIFIED_MEMORY")) << started.out;

  const auto record = read_text(f.dir.path() / "record.txt");
  EXPECT_TRUE(contains(record, "arg -H\narg 127.0.0.1\narg -p\narg " + port + "\narg -c\n"))
      << record;
  EXPECT_FALSE(contains(record, "GGML_CUDA_ENABLE_UNIFIED_MEMORY")) << record;
  EXPECT_TRUE(std::filesystem::exists(f.dir.path() / "gb10tune" / ("rpc-" + port + ".pid")));
  EXPECT_TRUE(std::filesystem::exists(f.dir.path() / "gb10tune" / ("rpc-" + port + ".log")));

  auto again = f.rpc({"start", "--port", port, "--server-bin", f.bin});
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_TRUE(contains(again.out, "already runs on port " + port)) << again.out;

  auto status = f.rpc({"status", "--port", port});
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_TRUE(contains(status.out, "started by gb10tune: pid " + std::to_string(pid)))
      << status.out;
  EXPECT_TRUE(contains(status.out, "device 0: 20.00 GiB free of 24.00 GiB")) << status.out;

  auto stopped = f.rpc({"stop", "--port", port});
  EXPECT_EQ(stopped.exit_code, 0) << stopped.out;
  EXPECT_FALSE(process_alive(pid));
  EXPECT_FALSE(std::filesystem::exists(f.dir.path() / "gb10tune" / ("rpc-" + port + ".pid")));

  auto after = f.rpc({"status", "--port", port});
  EXPECT_EQ(after.exit_code, 1);
  EXPECT_TRUE(contains(after.out, "is not reachable")) << after.out;
}

// A worker whose log shows a client still connected serves a head: `rpc status` asks it
// nothing (a hello queued behind the head's session can kill rpc-server later) and answers at
// once; once the client has gone it asks again.
// A worker's port held by another program: refused before anything starts (exit 6), in words
// that name the worker, not llama-server.
TEST(CliRpc, APortAnotherProgramHoldsStartsNothingAndNamesTheWorker) {
  RpcFixture f;
  const int port = free_tcp_port();
  const HeldPort held(port, true);
  auto refused = f.rpc({"start", "--port", std::to_string(port), "--rpc-server", f.bin});
  EXPECT_EQ(refused.exit_code, 6) << refused.out;
  EXPECT_TRUE(contains(refused.out, "ggml-rpc-server was not started: port in use (127.0.0.1:" +
                                        std::to_string(port) + " is taken)"))
      << refused.out;
  EXPECT_TRUE(contains(refused.out, "`gb10tune rpc stop`")) << refused.out;
  EXPECT_FALSE(std::filesystem::exists(f.dir.path() / "gb10tune" /
                                       ("rpc-" + std::to_string(port) + ".pid")));
}

TEST(CliRpc, StatusDoesNotAskAWorkerThatServesAClient) {
  RpcFixture f;
  const std::string port = std::to_string(free_tcp_port());
  f.started_ports.push_back(port);
  ASSERT_EQ(f.rpc({"start", "--port", port, "--server-bin", f.bin}).exit_code, 0);
  const auto log = f.dir.path() / "gb10tune" / ("rpc-" + port + ".log");
  // Up to 30 s for the worker's log to say it (a loaded machine takes its time).
  const auto wait_for = [&](const std::string& text, std::size_t count) {
    for (int i = 0; i < 1500; ++i) {
      const std::string now = read_text(log);
      std::size_t seen = 0;
      for (auto at = now.find(text); at != std::string::npos; at = now.find(text, at + 1)) {
        ++seen;
      }
      if (seen >= count) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  };
  // rpc start's own hellos have come and gone.
  ASSERT_TRUE(wait_for("Client connection closed", 1)) << read_text(log);
  const std::size_t accepted_before = [&] {
    const std::string now = read_text(log);
    std::size_t seen = 0;
    for (auto at = now.find("Accepted"); at != std::string::npos;
         at = now.find("Accepted", at + 1)) {
      ++seen;
    }
    return seen;
  }();
  {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    auto head = platform::TcpConnection::connect("127.0.0.1", std::stoi(port), deadline);
    ASSERT_TRUE(head) << head.error().message;
    ASSERT_TRUE(head->send_all(rpc::encode_hello(), deadline));
    ASSERT_TRUE(head->receive_exact(8 + rpc::kHelloAnswerSize, deadline));
    ASSERT_TRUE(wait_for("Accepted client connection", accepted_before + 1)) << read_text(log);
    const auto start = std::chrono::steady_clock::now();
    auto busy = f.rpc({"status", "--port", port, "--json"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
    EXPECT_EQ(busy.exit_code, 0) << busy.out;
    EXPECT_TRUE(contains(busy.out, "\"busy\": true")) << busy.out;
    EXPECT_TRUE(contains(busy.out, "serving a client")) << busy.out;
  }
  ASSERT_TRUE(wait_for("Client connection closed", accepted_before + 1)) << read_text(log);
  auto idle = f.rpc({"status", "--port", port});
  EXPECT_EQ(idle.exit_code, 0) << idle.out;
  EXPECT_TRUE(contains(idle.out, "device 0: 20.00 GiB free of 24.00 GiB")) << idle.out;
}

TEST(CliRpc, RefusesAnAnyAddressBindWithoutExpose) {
  RpcFixture f;
  auto refused = f.rpc({"start", "--host", "0.0.0.0", "--port", "50162", "--server-bin", f.bin});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(contains(refused.out, "no authentication")) << refused.out;
  EXPECT_TRUE(contains(refused.out, "--expose")) << refused.out;
  EXPECT_FALSE(std::filesystem::exists(f.dir.path() / "record.txt"));
}

TEST(CliRpc, RefusesTheAnyAddressInEverySpellingRpcServerReads) {
  RpcFixture f;
  // The bind is judged before the binary is looked for: a missing binary cannot hide it.
  for (const char* host : {"0", "0.0", "0x0", "000.0.0.0", "0:0::0", "[::]"}) {
    auto refused = f.rpc(
        {"start", "--host", host, "--port", "50162", "--server-bin", "/nonexistent/rpc-server"});
    EXPECT_EQ(refused.exit_code, 2) << host;
    EXPECT_TRUE(contains(refused.out, "every interface")) << host << ": " << refused.out;
    EXPECT_TRUE(contains(refused.out, "--expose")) << host << ": " << refused.out;
  }
}

TEST(CliRpc, MissingBinaryIsAUsageError) {
  RpcFixture f;
  auto missing = f.rpc({"start", "--port", "50163", "--server-bin", "/nonexistent/rpc-server"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(contains(missing.out, "-DGGML_RPC=ON")) << missing.out;
  auto none_on_path = f.rpc({"start", "--port", "50163"}, {"PATH=/nonexistent"});
  EXPECT_EQ(none_on_path.exit_code, 2);
  EXPECT_TRUE(contains(none_on_path.out, "ggml-rpc-server or rpc-server")) << none_on_path.out;
}

// Issue 22 item 1: rpc start refuses a worker binary others could replace (exit 2, naming it and
// the fix) and never runs it.
TEST(CliRpc, WorkerBinaryOthersCouldReplaceIsRefusedAndNeverRun) {
  RpcFixture f;
  const auto open = copy_into_open_dir(f.dir, f.bin);
  const std::string port = std::to_string(free_tcp_port());
  f.started_ports.push_back(port);
  auto refused = f.rpc({"start", "--port", port, "--server-bin", open.string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_TRUE(contains(refused.out, "refusing to run " + open.string())) << refused.out;
  EXPECT_TRUE(contains(refused.out, "chmod go-w " + open.parent_path().string())) << refused.out;
  EXPECT_FALSE(std::filesystem::exists(f.dir.path() / "record.txt"));
}

TEST(CliRpc, AWorkerOfAnotherProtocolVersionIsRefusedAndStopped) {
  RpcFixture f;
  const std::string port = std::to_string(free_tcp_port());
  f.started_ports.push_back(port);
  auto refused =
      f.rpc({"start", "--port", port, "--server-bin", f.bin}, {"STANDIN_RPC_VERSION=4.0.0"});
  EXPECT_EQ(refused.exit_code, 5) << refused.out;
  EXPECT_TRUE(contains(refused.out, "speaks RPC protocol 4.0.0")) << refused.out;
  EXPECT_TRUE(contains(refused.out, "5.1.0")) << refused.out;
  auto status = f.rpc({"status", "--port", port});
  EXPECT_EQ(status.exit_code, 1) << status.out;
  EXPECT_FALSE(std::filesystem::exists(f.dir.path() / "gb10tune" / ("rpc-" + port + ".pid")));
}

}  // namespace
}  // namespace gb10tune::testing
