// The two-worker flow as CI runs it, with the stand-ins (the real binaries' run is recorded in
// fixtures/rpc and checked by RpcCapturedRun): `rpc start` twice, `launch --rpc`, `verify`,
// `stop`, `rpc stop` twice, and nothing left running. The real gb10tune binary throughout.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::testing {
namespace {

using nlohmann::json;

bool flow_alive(int pid) {
  const auto stat = sys::read_process_stat(platform::Sysroot(), pid);
  return stat && !stat->exited();
}

json flow_document(const std::string& out) {
  const auto at = out.find("{\n");
  return at == std::string::npos ? json() : json::parse(out.substr(at));
}

TEST(CliRpcFlow, TwoStandInWorkersLaunchVerifyStop) {
  TempDir dir;
  const auto model = dir.path() / "model.gguf";
  tiny_qwen35_model(false).write(model);
  const std::vector<std::string> env = {
      "XDG_STATE_HOME=" + (dir.path() / "state").string(),
      "XDG_CONFIG_HOME=" + (dir.path() / "config").string(),
      "STANDIN_HELP=" + fixture("llama-server/help-2026-08-commit-3f545be-rpc.txt").string(),
      "STANDIN_LOAD_MS=100",
      // A build with every CPU feature verify knows (K11).
      "STANDIN_SYSTEM_INFO=system_info: n_threads = 2 | CPU : AVX2 = 1 | FMA = 1 | F16C = 1 | "
      "AVX512 = 1 | DOTPROD = 1 | MATMUL_INT8 = 1 | SVE = 1 |"};
  const std::vector<std::string> ports = {std::to_string(free_tcp_port()),
                                          std::to_string(free_tcp_port())};
  std::vector<int> pids;
  for (const std::string& port : ports) {
    const auto started = run_binary(
        {"rpc", "start", "--port", port, "--server-bin", GB10TUNE_STAND_IN_RPC_SERVER, "--json"},
        env);
    ASSERT_EQ(started.exit_code, 0) << started.out;
    pids.push_back(flow_document(started.out).at("pid").get<int>());
  }
  const std::string workers = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
  const auto launched = run_binary(
      {"launch", "--model", model.string(), "--llama-server", stand_in_server_path().string(),
       "--rpc", workers, "--port", std::to_string(free_tcp_port()), "--slots", "1",
       "--ctx-per-slot", "4096", "--cache-ram", "0", "--reserve", "0", "--json"},
      env);
  ASSERT_EQ(launched.exit_code, 0) << launched.out;
  const json doc = flow_document(launched.out);
  const int head = doc.at("started").at("pid").get<int>();
  pids.push_back(head);
  ASSERT_EQ(doc.at("rpc").at("nodes").size(), 3u);
  EXPECT_EQ(doc.at("rpc").at("nodes")[0].at("node"), "127.0.0.1:" + ports[0]);
  // The stand-in workers report 20 GiB free each: an even cut of the 9 layers.
  EXPECT_EQ(doc.at("rpc").at("nodes")[0].at("layers").size(), 5u);
  EXPECT_EQ(doc.at("rpc").at("nodes")[1].at("output_layer"), true);
  EXPECT_EQ(doc.at("calibration").at("recorded"), false);

  const auto verified = run_binary({"verify", "--json"}, env);
  EXPECT_EQ(verified.exit_code, 0) << verified.out;
  const json report = flow_document(verified.out);
  int reachable = 0;
  for (const json& check : report.at("servers").at(0).at("checks")) {
    if (check.at("group") != "rpc") {
      continue;
    }
    EXPECT_NE(check.at("severity"), "fail") << check.dump();
    if (check.at("id") == "rpc-worker-reachable") {
      reachable += check.at("severity") == "ok" ? 1 : 0;
    }
    if (check.at("id") == "rpc-worker-memory") {
      // Started here by rpc start: its process is the evidence.
      EXPECT_NE(check.at("evidence").get<std::string>().find("RSS now"), std::string::npos)
          << check.dump();
    }
  }
  EXPECT_EQ(reachable, 2) << verified.out;

  const auto stopped = run_binary({"stop"}, env);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.out;
  EXPECT_NE(stopped.out.find("RPC worker 127.0.0.1:" + ports[1] + " keeps running"),
            std::string::npos)
      << stopped.out;
  for (const std::string& port : ports) {
    EXPECT_EQ(run_binary({"rpc", "stop", "--port", port}, env).exit_code, 0);
  }
  for (const int pid : pids) {
    EXPECT_FALSE(flow_alive(pid)) << pid;
  }
}

}  // namespace
}  // namespace gb10tune::testing
