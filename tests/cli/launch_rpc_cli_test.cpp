// launch --rpc against stand-in workers (in-process, speaking llama.cpp's RPC framing): the plan
// per node, and each refusal naming the node — a worker that is down or answers garbage (exit
// 5, bounded), another protocol version (exit 2, both versions named), a plan that fits the
// nodes together but not one of them (exit 3).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/platform/environment.hpp"
#include "support/fake_rpc_worker.hpp"
#include "support/gguf_writer.hpp"
#include "support/stand_in.hpp"
#include "support/systemd_unit_reader.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;
using testing::FakeRpcWorker;
using testing::WorkerBehaviour;
using testing::WorkerConfig;

constexpr std::uint64_t kRpcGB = 1'000'000'000ull;

bool rpc_has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string rpc_at(int port) {
  return "127.0.0.1:" + std::to_string(port);
}

WorkerConfig rpc_worker_with(std::uint64_t free, std::uint64_t total) {
  WorkerConfig config;
  config.devices = std::vector<rpc::DeviceMemory>(1, rpc::DeviceMemory{free, total});
  return config;
}

// The stand-in llama-server with the --help of a build that has the RPC backend (a build
// without it has no --rpc option), behind a wrapper script that sets STANDIN_HELP.
std::string rpc_server_wrapper() {
  static const testing::TempDir dir;
  const auto path = dir.path() / "llama-server";
  if (!std::filesystem::exists(path)) {
    std::ofstream out(path);
    out << "#!/bin/sh\nSTANDIN_HELP='" << GB10TUNE_FIXTURES_DIR
        << "/llama-server/help-2026-08-commit-3f545be-rpc.txt' exec '"
        << testing::stand_in_server_path().string() << "' \"$@\"\n";
    out.close();
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  }
  return path.string();
}

testing::CliResult launch_rpc(const std::string& scenario, std::vector<std::string> args) {
  args.insert(args.begin(),
              {"launch", "--llama-server", rpc_server_wrapper(), "--dry-run", "--slots", "1",
               "--ctx-per-slot", "8192", "--cache-ram", "0", "--no-mtp"});
  return testing::run_cli_on(scenario, args, {});
}

// Two Sparks: a GB10 worker with 100 GB free, the GB10 head (CUDA0, MemAvailable 109.9 GB)
// after it. llama.cpp cuts at 100 / 209.9 = 0.476 of the 41 layers: blocks 0-19 on RPC0, the
// rest and the output layer on the head's CUDA0, the token embedding on the head's CPU.
TEST(CliLaunchRpc, TwoSparksArePlannedPerNodeWithTheWorkerFirst) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 40);
  FakeRpcWorker worker(rpc_worker_with(100 * kRpcGB, 121 * kRpcGB));
  const auto result = launch_rpc(
      "gb10", {"--model", model, "--backend", "cuda", "--rpc", rpc_at(worker.port()), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  const json doc = json::parse(result.out);
  const json rpc = doc["rpc"];
  ASSERT_TRUE(rpc.is_object()) << result.out;
  EXPECT_EQ(rpc["workers"][0]["protocol_version"], "5.1.0");
  EXPECT_EQ(rpc["workers"][0]["devices"][0]["free_bytes"], 100 * kRpcGB);
  const json worker_node = rpc["nodes"][0];
  const json head = rpc["nodes"][1];
  EXPECT_EQ(worker_node["node"], rpc_at(worker.port()));
  EXPECT_EQ(worker_node["devices"], json({"RPC0"}));
  EXPECT_EQ(worker_node["layers"].size(), 20u);
  EXPECT_EQ(worker_node["layers"].back(), 19);
  EXPECT_EQ(worker_node["output_layer"], false);
  EXPECT_EQ(head["node"], "head");
  EXPECT_EQ(head["devices"], json({"CPU", "CUDA0"}));
  EXPECT_EQ(head["layers"].front(), 20);
  EXPECT_EQ(head["output_layer"], true);
  EXPECT_EQ(head["input_layer"], true);
  // Every weight is somewhere, once.
  EXPECT_EQ(worker_node["weights_bytes"].get<std::uint64_t>() +
                head["weights_bytes"].get<std::uint64_t>(),
            doc["plan"]["weights_bytes"].get<std::uint64_t>());
  EXPECT_EQ(rpc["fits"], true);
  // The head's command carries --rpc; each worker's command is printed.
  const json argv = doc["command_line"]["argv"];
  const auto rpc_arg = std::find(argv.begin(), argv.end(), "--rpc");
  ASSERT_NE(rpc_arg, argv.end()) << argv;
  EXPECT_EQ(*(rpc_arg + 1), rpc_at(worker.port()));
  EXPECT_EQ(rpc["workers"][0]["argv"], json({"ggml-rpc-server", "-H", "127.0.0.1", "-p",
                                             std::to_string(worker.port()), "-c"}));

  const auto text =
      launch_rpc("gb10", {"--model", model, "--backend", "cuda", "--rpc", rpc_at(worker.port())});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(rpc_has(text.out, "per node (RPC)")) << text.out;
  EXPECT_TRUE(rpc_has(text.out, "layers 0-19 on RPC0")) << text.out;
  EXPECT_TRUE(rpc_has(text.out, "gb10tune rpc start --host 127.0.0.1 --port " +
                                    std::to_string(worker.port()) + " --cache"))
      << text.out;
}

// 40 blocks (35 GB) split evenly (-ts 1,1) over a 64 GB and a 16 GB CPU worker: together they
// hold it, the small one cannot hold its half. Refused, naming that worker.
TEST(CliLaunchRpc, APlanThatFitsThePairButNotOneNodeIsRefusedNamingTheNode) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 40);
  FakeRpcWorker big(rpc_worker_with(64 * kRpcGB, 64 * kRpcGB));
  FakeRpcWorker small(rpc_worker_with(16 * kRpcGB, 16 * kRpcGB));
  const std::string list = rpc_at(big.port()) + "," + rpc_at(small.port());
  const auto refused = launch_rpc("gb10", {"--model", model, "--backend", "cpu", "--no-fit",
                                           "--rpc", list, "--", "-ts", "1,1"});
  ASSERT_EQ(refused.exit_code, 3) << refused.err << refused.out;
  EXPECT_TRUE(rpc_has(refused.err, "RPC worker " + rpc_at(small.port()) + " needs")) << refused.err;
  EXPECT_FALSE(rpc_has(refused.err, "RPC worker " + rpc_at(big.port()) + " needs")) << refused.err;
  EXPECT_TRUE(rpc_has(refused.err, "the split, not the sum, is short")) << refused.err;
  EXPECT_TRUE(rpc_has(refused.out, "DOES NOT FIT")) << refused.out;

  // By free memory (llama.cpp's default) the small worker gets its share and it fits.
  const auto by_free =
      launch_rpc("gb10", {"--model", model, "--backend", "cpu", "--rpc", list, "--json"});
  ASSERT_EQ(by_free.exit_code, 0) << by_free.err;
  const json nodes = json::parse(by_free.out)["rpc"]["nodes"];
  EXPECT_EQ(nodes[0]["layers"].size(), 33u);  // 64/80 of 41 layers: il/41 < 0.8
  EXPECT_EQ(nodes[1]["layers"].size(), 7u);
  EXPECT_EQ(nodes[1]["output_layer"], true);
  EXPECT_EQ(nodes[0]["free_is_total"], true);
}

// A head with a discrete GPU (an RTX 4090, 24.9 GB free, in a host with 125 GB available)
// beside a GB10 worker: the head's GPU part is judged against the GPU, not MemAvailable. Split
// 1:3 (-ts 1,3) the GPU is given 31 of 41 layers (~27 GB): refused, naming the head's GPU,
// though the host could hold it all. By free memory it gets 8 and fits.
TEST(CliLaunchRpc, ADiscreteHeadGpuIsJudgedAgainstItsOwnMemory) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 40);
  FakeRpcWorker worker(rpc_worker_with(100 * kRpcGB, 121 * kRpcGB));
  const auto refused = launch_rpc("dgpu-24g", {"--model", model, "--backend", "cuda", "--no-fit",
                                               "--rpc", rpc_at(worker.port()), "--", "-ts", "1,3"});
  ASSERT_EQ(refused.exit_code, 3) << refused.err << refused.out;
  EXPECT_TRUE(rpc_has(refused.err, "the head's CUDA0 needs")) << refused.err;
  EXPECT_TRUE(rpc_has(refused.err, "free 23746.49 − reserve 1024.00 MiB")) << refused.err;
  EXPECT_TRUE(rpc_has(refused.out, "head CUDA0")) << refused.out;
  EXPECT_TRUE(rpc_has(refused.out, "(NVIDIA GeForce RTX 4090)")) << refused.out;

  const auto by_free = launch_rpc("dgpu-24g", {"--model", model, "--backend", "cuda", "--rpc",
                                               rpc_at(worker.port()), "--json"});
  ASSERT_EQ(by_free.exit_code, 0) << by_free.err << by_free.out;
  const json doc = json::parse(by_free.out);
  const json head = doc["rpc"]["nodes"][1];
  ASSERT_EQ(head["gpus"].size(), 1u) << head;
  const json gpu = head["gpus"][0];
  EXPECT_EQ(gpu["name"], "CUDA0");
  EXPECT_EQ(gpu["free_bytes"], 24'900'000'000ull);
  EXPECT_EQ(gpu["available_bytes"], 24'900'000'000ull - (1ull << 30));
  EXPECT_EQ(gpu["output_layer"], true);
  EXPECT_EQ(gpu["fits"], true);
  // The worker holds il / 41 < 100 / 124.9 (blocks 0-32); the GPU blocks 33-39 and the output.
  EXPECT_EQ(gpu["layers"].size(), 7u);
  EXPECT_EQ(gpu["layers"].front(), 33);
  EXPECT_TRUE(head["layers"].empty()) << "every block is on a GPU";
  EXPECT_EQ(head["fits"], true);
  // Every weight is somewhere, once: the worker's, the head's host (the token embedding) and
  // the head's GPU.
  EXPECT_EQ(doc["rpc"]["nodes"][0]["weights_bytes"].get<std::uint64_t>() +
                head["weights_bytes"].get<std::uint64_t>() +
                gpu["weights_bytes"].get<std::uint64_t>(),
            doc["plan"]["weights_bytes"].get<std::uint64_t>());
}

TEST(CliLaunchRpc, AWorkerThatIsDownIsRefusedNamingIt) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  FakeRpcWorker up(WorkerConfig{});
  const int down = testing::free_tcp_port();
  const auto result =
      launch_rpc("gb10", {"--model", model, "--rpc", rpc_at(up.port()) + "," + rpc_at(down)});
  EXPECT_EQ(result.exit_code, 5) << result.err;
  EXPECT_TRUE(rpc_has(result.err, "RPC worker " + rpc_at(down) + " is not reachable"))
      << result.err;
  EXPECT_TRUE(
      rpc_has(result.err, "gb10tune rpc start --host 127.0.0.1 --port " + std::to_string(down)))
      << result.err;
}

TEST(CliLaunchRpc, AWorkerOfAnotherProtocolVersionIsRefusedNamingBothVersions) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  WorkerConfig config;
  config.version = {6, 0, 0};
  FakeRpcWorker worker(config);
  const auto result = launch_rpc("gb10", {"--model", model, "--rpc", rpc_at(worker.port())});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_TRUE(
      rpc_has(result.err, "RPC worker " + rpc_at(worker.port()) + " speaks RPC protocol 6.0.0"))
      << result.err;
  EXPECT_TRUE(rpc_has(result.err, "speaks 5.1.0")) << result.err;
}

// Garbage, a close mid-hello or silence: refused within the worker timeout, never a hang.
TEST(CliLaunchRpc, AWorkerThatMisbehavesIsRefusedInBoundedTime) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  for (const auto behaviour :
       {WorkerBehaviour::garbage, WorkerBehaviour::close_mid_hello, WorkerBehaviour::silent}) {
    WorkerConfig config;
    config.behaviour = behaviour;
    FakeRpcWorker worker(config);
    const auto start = std::chrono::steady_clock::now();
    const auto result = launch_rpc("gb10", {"--model", model, "--rpc", rpc_at(worker.port())});
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(result.exit_code, 5) << result.err;
    EXPECT_TRUE(rpc_has(result.err, "RPC worker " + rpc_at(worker.port()))) << result.err;
    EXPECT_LT(took, std::chrono::seconds(12));
  }
}

TEST(CliLaunchRpc, PrintSystemdGivesTheHeadAndEachWorkerAUnit) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  const auto result = launch_rpc("gb10", {"--model", model, "--print", "systemd", "--", "--rpc",
                                          "192.168.100.2:50052,192.168.100.3:50052"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(rpc_has(result.out, "# node: head")) << result.out;
  EXPECT_TRUE(rpc_has(result.out, "--rpc 192.168.100.2:50052,192.168.100.3:50052")) << result.out;
  EXPECT_TRUE(rpc_has(result.out, "# node: RPC worker 192.168.100.2:50052")) << result.out;
  EXPECT_TRUE(rpc_has(result.out, "ExecStart=ggml-rpc-server -H 192.168.100.3 -p 50052 -c"))
      << result.out;
  EXPECT_TRUE(rpc_has(result.out, "UnsetEnvironment=GGML_CUDA_ENABLE_UNIFIED_MEMORY"))
      << result.out;
}

// A worker address with a line break, '%' and '$' (an attempt to add a directive to the unit)
// is not an address rpc-server can bind: refused before any unit is written. The units' own
// escaping of such text is checked in SystemdUnitExport.*.
TEST(CliLaunchRpc, PrintSystemdRefusesAWorkerAddressThatIsNoAddress) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  const std::string host = "w1\nExecStartPre=/bin/false %h $HOME";
  const auto result =
      launch_rpc("gb10", {"--model", model, "--print", "systemd", "--", "--rpc", host + ":50052"});
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_EQ(result.out.find("ExecStartPre"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("[Service]"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("rpc-server cannot bind"), std::string::npos) << result.err;
}

// The fixture's own build (no RPC backend) has no --rpc: refused before any worker is asked.
TEST(CliLaunchRpc, ABuildWithoutTheRpcBackendIsRefused) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  const auto result =
      testing::run_cli_on("gb10",
                          {"launch", "--llama-server", testing::stand_in_server_path().string(),
                           "--dry-run", "--model", model, "--rpc", "192.168.100.2:50052"},
                          {});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_TRUE(rpc_has(result.err, "-DGGML_RPC=ON")) << result.err;
}

// LLAMA_ARG_RPC in the environment would send the server to workers nobody planned (K16):
// taken as --rpc, so a worker that is down is refused like one given on the command line.
TEST(CliLaunchRpc, LlamaArgRpcInTheEnvironmentIsPlannedAsRpc) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  const int down = testing::free_tcp_port();
  platform::Environment env;
  env.set("LLAMA_ARG_RPC", rpc_at(down));
  const auto result = testing::run_cli_on(
      "gb10", {"launch", "--llama-server", rpc_server_wrapper(), "--dry-run", "--model", model},
      env);
  EXPECT_EQ(result.exit_code, 5) << result.err;
  EXPECT_TRUE(rpc_has(result.err, "LLAMA_ARG_RPC=" + rpc_at(down))) << result.err;
  EXPECT_TRUE(rpc_has(result.err, "RPC worker " + rpc_at(down) + " is not reachable"))
      << result.err;
}

TEST(CliLaunchRpc, BadWorkerListsAreUsageErrors) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  for (const char* bad : {"spark2", "a:1,a:1", "0.0.0.0:"}) {
    const auto result = launch_rpc("gb10", {"--model", model, "--rpc", bad});
    EXPECT_EQ(result.exit_code, 2) << bad << result.err;
  }
}

}  // namespace
}  // namespace gb10tune
