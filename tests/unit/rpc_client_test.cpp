// The RPC client against the stand-in worker: a good answer, another protocol version, garbage,
// a close mid-hello, silence; and the message encoding against bytes captured from a real
// rpc-server.
#include "gb10tune/rpc/rpc_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>

#include "support/fake_rpc_worker.hpp"
#include "support/test_context.hpp"

namespace gb10tune {
namespace {

using namespace std::chrono_literals;
using testing::FakeRpcWorker;
using testing::WorkerBehaviour;
using testing::WorkerConfig;

rpc::Endpoint local_endpoint(int port) {
  return rpc::Endpoint{"127.0.0.1", port};
}

TEST(RpcProtocol, EncodesRequestsLikeGgmlRpc) {
  const auto hello = rpc::encode_hello();
  ASSERT_EQ(hello.size(), 1u + 8u + 24u);
  EXPECT_EQ(hello[0], 14);
  EXPECT_EQ(hello[1], 24);
  for (std::size_t i = 2; i < hello.size(); ++i) {
    EXPECT_EQ(hello[i], 0) << i;
  }
  EXPECT_EQ(rpc::encode_device_count(), (std::vector<std::uint8_t>{15, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(rpc::encode_device_memory(2),
            (std::vector<std::uint8_t>{11, 4, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0}));
}

TEST(RpcProtocol, VersionRuleIsLlamaCpps) {
  EXPECT_TRUE(rpc::compatible({5, 1, 0}, {5, 1, 0}));
  EXPECT_TRUE(rpc::compatible({5, 0, 3}, {5, 1, 0}));
  EXPECT_FALSE(rpc::compatible({5, 2, 0}, {5, 1, 0}));
  EXPECT_FALSE(rpc::compatible({4, 1, 0}, {5, 1, 0}));
}

TEST(RpcProtocol, ParsesEndpoints) {
  auto list = rpc::parse_endpoint_list("10.0.0.2:50052,[fe80::1]:50053,spark2:50054");
  ASSERT_TRUE(list) << list.error().message;
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[1].host, "fe80::1");
  EXPECT_EQ((*list)[1].to_string(), "[fe80::1]:50053");
  EXPECT_EQ((*list)[2].port, 50054);
  for (const char* bad : {"", "host", "host:", ":50052", "host:0", "host:70000", "h:1x",
                          "fe80::1:50052", "a:1,a:1", "a:1,"}) {
    auto parsed = rpc::parse_endpoint_list(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().code, ExitCode::usage) << bad;
  }
}

TEST(RpcClient, ReadsVersionAndEveryDevice) {
  WorkerConfig config;
  config.devices = {{100, 200}, {(90ull << 30) + 7, 121ull << 30}};
  FakeRpcWorker worker(config);
  auto info = rpc::query_worker(local_endpoint(worker.port()), 2s);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->version, rpc::kKnownVersion);
  ASSERT_EQ(info->devices.size(), 2u);
  EXPECT_EQ(info->devices[0].free_bytes, 100u);
  EXPECT_EQ(info->devices[1].free_bytes, (90ull << 30) + 7);
  EXPECT_EQ(info->devices[1].total_bytes, 121ull << 30);
  EXPECT_EQ(info->free_bytes(), 100u + (90ull << 30) + 7);
}

TEST(RpcClient, RefusesAnotherProtocolVersionNamingNodeAndBothVersions) {
  WorkerConfig config;
  config.version = {4, 0, 1};
  FakeRpcWorker worker(config);
  auto info = rpc::query_worker(local_endpoint(worker.port()), 2s);
  ASSERT_FALSE(info);
  const auto& message = info.error().message;
  EXPECT_NE(message.find(local_endpoint(worker.port()).to_string()), std::string::npos) << message;
  EXPECT_NE(message.find("4.0.1"), std::string::npos) << message;
  EXPECT_NE(message.find("5.1.0"), std::string::npos) << message;

  WorkerConfig newer;
  newer.version = {5, 2, 0};
  FakeRpcWorker newer_worker(newer);
  auto refused = rpc::query_worker(local_endpoint(newer_worker.port()), 2s);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("5.2.0"), std::string::npos);
}

// Each misbehaviour ends in an Error naming the worker, well within the deadline.
void expect_bounded_refusal(WorkerBehaviour behaviour, std::chrono::milliseconds timeout,
                            const std::string& expected_words) {
  WorkerConfig config;
  config.behaviour = behaviour;
  FakeRpcWorker worker(config);
  const auto start = std::chrono::steady_clock::now();
  auto info = rpc::query_worker(local_endpoint(worker.port()), timeout);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ExitCode::failed);
  EXPECT_NE(info.error().message.find(local_endpoint(worker.port()).to_string()), std::string::npos)
      << info.error().message;
  EXPECT_NE(info.error().message.find(expected_words), std::string::npos) << info.error().message;
  EXPECT_LT(took, timeout + 500ms);
}

TEST(RpcClient, GarbageIsRefused) {
  expect_bounded_refusal(WorkerBehaviour::garbage, 2s, "not an rpc-server");
}

TEST(RpcClient, CloseMidHelloIsRefused) {
  expect_bounded_refusal(WorkerBehaviour::close_mid_hello, 2s, "connection closed after 10 of 28");
}

TEST(RpcClient, CloseAtConnectIsRefused) {
  expect_bounded_refusal(WorkerBehaviour::close_at_connect, 2s, "connection closed");
}

TEST(RpcClient, SilenceEndsAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  expect_bounded_refusal(WorkerBehaviour::silent, 300ms, "no answer in time");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
}

TEST(RpcClient, NobodyListeningIsNotReachable) {
  int port = 0;
  {
    FakeRpcWorker gone{WorkerConfig{}};
    port = gone.port();
  }
  auto info = rpc::query_worker(local_endpoint(port), 1s);
  ASSERT_FALSE(info);
  EXPECT_NE(info.error().message.find("is not reachable"), std::string::npos)
      << info.error().message;
  EXPECT_NE(info.error().message.find("gb10tune rpc start"), std::string::npos);
}

}  // namespace
}  // namespace gb10tune

namespace gb10tune {
namespace {

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

// The capture's request and answer lines, in order.
std::vector<std::pair<std::string, std::vector<std::uint8_t>>> captured_exchange() {
  std::istringstream in(
      testing::read_text(testing::fixture("rpc/ggml-rpc-server-3f545be-cpu.txt")));
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> lines;
  std::string kind;
  std::string hex;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream fields(line);
    fields >> kind >> hex;
    lines.emplace_back(kind, from_hex(hex));
  }
  return lines;
}

std::vector<std::uint8_t> payload_of(const std::vector<std::uint8_t>& answer) {
  EXPECT_GE(answer.size(), 8u);
  const std::vector<std::uint8_t> prefix(answer.begin(), answer.begin() + 8);
  EXPECT_EQ(rpc::decode_size(prefix), answer.size() - 8);
  return {answer.begin() + 8, answer.end()};
}

TEST(RpcProtocol, MatchesBytesCapturedFromTheRealWorker) {
  const auto lines = captured_exchange();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0].second, rpc::encode_hello());
  EXPECT_EQ(lines[2].second, rpc::encode_device_count());
  EXPECT_EQ(lines[4].second, rpc::encode_device_memory(0));

  const auto hello = payload_of(lines[1].second);
  ASSERT_EQ(hello.size(), rpc::kHelloAnswerSize);
  EXPECT_EQ(rpc::decode_hello(hello), (rpc::ProtocolVersion{5, 1, 0}));
  EXPECT_EQ(rpc::decode_device_count(payload_of(lines[3].second)), 1u);
  const auto memory = rpc::decode_device_memory(payload_of(lines[5].second));
  EXPECT_EQ(memory.total_bytes, 25275990016ull);  // the banner rounds it down to 24105 MiB
  EXPECT_EQ(memory.free_bytes, memory.total_bytes);
}

}  // namespace
}  // namespace gb10tune
