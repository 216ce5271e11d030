// verify's checks of the RPC workers of a launch record: a TCP connect only, the build and the
// memory from evidence, "unknown" (a warning) without it.
#include "gb10tune/verify/rpc_check.hpp"

#include <gtest/gtest.h>

namespace gb10tune {
namespace {

using nlohmann::json;
using server::Finding;
using server::Severity;

// A record's "rpc" document: two workers, their planned buffers and load.
json rpc_document() {
  json nodes = json::array();
  nodes.push_back({{"node", "10.0.0.2:50052"},
                   {"devices", {"RPC0"}},
                   {"buffer_bytes", 100ull << 20},
                   {"load_bytes", 105ull << 20}});
  nodes.push_back({{"node", "10.0.0.3:50052"},
                   {"devices", {"RPC1"}},
                   {"buffer_bytes", 50ull << 20},
                   {"load_bytes", 55ull << 20}});
  nodes.push_back({{"node", "head"}, {"devices", {"CPU"}}, {"buffer_bytes", 1 << 20}});
  json workers = json::array();
  workers.push_back({{"endpoint", "10.0.0.2:50052"}, {"protocol_version", "5.1.0"}});
  workers.push_back({{"endpoint", "10.0.0.3:50052"}, {"protocol_version", "5.1.0"}});
  return {{"head_protocol_version", "5.1.0"}, {"workers", workers}, {"nodes", nodes}};
}

// The record's workers as its reader reads them from a plan document holding `rpc`.
launch::RecordedRpc rpc_as_read(const json& rpc) {
  const launch::RecordedPlan planned = launch::read_recorded_plan({{"rpc", rpc}});
  EXPECT_TRUE(planned.rpc);
  return planned.rpc.value_or(launch::RecordedRpc{});
}

launch::RecordedRpc rpc_recorded() {
  return rpc_as_read(rpc_document());
}

const Finding& rpc_find(const std::vector<Finding>& findings, const std::string& id,
                        std::size_t nth) {
  std::size_t seen = 0;
  for (const Finding& f : findings) {
    if (f.id == id && seen++ == nth) {
      return f;
    }
  }
  throw std::runtime_error("no finding " + id);
}

TEST(RpcCheck, WithoutEvidenceBuildAndMemoryAreUnknownAndNothingIsSent) {
  std::vector<std::string> connected;
  verify::RpcWorkerAccess access;
  access.connect = [&](const rpc::Endpoint& e) -> Status {
    connected.push_back(e.to_string());
    if (e.host == "10.0.0.3") {
      return Error{"connection refused"};
    }
    return {};
  };
  const auto findings =
      verify::check_rpc_workers(rpc_recorded(), "", "/opt/llama/llama-server", access);
  ASSERT_EQ(findings.size(), 6u);
  EXPECT_EQ(connected, (std::vector<std::string>{"10.0.0.2:50052", "10.0.0.3:50052"}));
  EXPECT_EQ(rpc_find(findings, "rpc-worker-reachable", 0).severity, Severity::ok);
  const Finding& down = rpc_find(findings, "rpc-worker-reachable", 1);
  EXPECT_EQ(down.severity, Severity::fail);
  EXPECT_NE(down.summary.find("10.0.0.3:50052"), std::string::npos);
  const Finding& build = rpc_find(findings, "rpc-worker-build", 0);
  EXPECT_EQ(build.severity, Severity::warn);
  EXPECT_EQ(build.evidence.rfind("unknown", 0), 0u) << build.evidence;
  const Finding& memory = rpc_find(findings, "rpc-worker-memory", 0);
  EXPECT_EQ(memory.severity, Severity::warn);
  EXPECT_EQ(memory.evidence.rfind("unknown", 0), 0u) << memory.evidence;
}

TEST(RpcCheck, TheHeadsBufferLinesAndALocalWorkerAreEvidence) {
  verify::RpcWorkerAccess access;
  access.connect = [](const rpc::Endpoint&) -> Status { return {}; };
  access.local = [](const rpc::Endpoint& e) -> std::optional<verify::LocalWorker> {
    if (e.host != "10.0.0.2") {
      return std::nullopt;
    }
    verify::LocalWorker w;
    w.pid = 42;
    w.binary = "/opt/llama/ggml-rpc-server";
    w.rss = 101ull << 20;
    return w;
  };
  const std::string log =
      "load_tensors: RPC0[10.0.0.2:50052] model buffer size =    90.00 MiB\n"
      "llama_kv_cache: RPC0[10.0.0.2:50052] KV buffer size =    10.00 MiB\n"
      "load_tensors: RPC0[10.0.0.3:50052] model buffer size =    80.00 MiB\n";
  const auto findings =
      verify::check_rpc_workers(rpc_recorded(), log, "/opt/llama/llama-server", access);
  EXPECT_EQ(rpc_find(findings, "rpc-worker-build", 0).severity, Severity::ok);
  EXPECT_EQ(rpc_find(findings, "rpc-worker-build", 1).severity, Severity::warn);  // remote
  const Finding& fits = rpc_find(findings, "rpc-worker-memory", 0);
  EXPECT_EQ(fits.severity, Severity::ok) << fits.evidence;
  EXPECT_NE(fits.evidence.find("pid 42"), std::string::npos);
  // 80 MiB logged where 50 were planned: off by 60%.
  const Finding& off = rpc_find(findings, "rpc-worker-memory", 1);
  EXPECT_EQ(off.severity, Severity::warn);
  EXPECT_NE(off.evidence.find("+60.0%"), std::string::npos) << off.evidence;
}

// A damaged record (wrong types anywhere) is unknown evidence, never an exception.
TEST(RpcCheck, ADamagedRecordIsUnknownNotACrash) {
  const json damaged = {{"head_protocol_version", 5},
                        {"workers", json::array({1, {{"endpoint", 5}}, {{"endpoint", "h:1"}}})},
                        {"nodes", json::array({"x", {{"node", 3}, {"load_bytes", "big"}}})}};
  verify::RpcWorkerAccess access;
  access.connect = [](const rpc::Endpoint&) -> Status { return {}; };
  std::vector<Finding> findings;
  ASSERT_NO_THROW(findings = verify::check_rpc_workers(rpc_as_read(damaged),
                                                       "x buffer size = 1 MiB", "", access));
  ASSERT_EQ(findings.size(), 5u);  // two unreadable workers, three findings for h:1
  EXPECT_EQ(findings[0].severity, Severity::warn);
  EXPECT_EQ(findings[1].severity, Severity::warn);
}

}  // namespace
}  // namespace gb10tune
