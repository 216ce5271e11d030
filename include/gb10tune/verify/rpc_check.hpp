// verify on a head launched with --rpc: each worker of the launch record, checked without
// disturbing it. A worker's rpc-server serves one client at a time and the running head holds
// that session, so verify never sends it an RPC message: reachability is a TCP connect only,
// the build and memory come from what launch recorded, the head's own log (-lv 4 buffer lines)
// and, for a worker on this machine that `gb10tune rpc start` started, its process and log.
// Where there is no evidence the finding says "unknown".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/launch/recorded_plan.hpp"
#include "gb10tune/rpc/rpc_protocol.hpp"
#include "gb10tune/server/rules.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::verify {

// A worker on this machine that `gb10tune rpc start` started (its record under the state
// directory names the same host:port).
struct LocalWorker {
  int pid = 0;
  std::string binary;                // argv[0] of the worker
  std::optional<std::uint64_t> rss;  // VmRSS now; nullopt when unreadable
  std::string log_text;              // the tail of its log ("" when unread)
};

// How the workers are reached.
struct RpcWorkerAccess {
  // A TCP connect (no data) within a short deadline; an Error naming the reason.
  std::function<Status(const rpc::Endpoint&)> connect;
  // The local worker of an endpoint, nullopt when it runs elsewhere (or was not started by
  // gb10tune); may be empty.
  std::function<std::optional<LocalWorker>(const rpc::Endpoint&)> local;
};

// The findings for every worker of `rpc` (what the launch record says of its workers):
// rpc-worker-reachable, rpc-worker-build and rpc-worker-memory per worker. `head_log` is the
// head's latest run's log text ("" when unread), `head_binary` its llama-server path.
std::vector<server::Finding> check_rpc_workers(const launch::RecordedRpc& rpc,
                                               std::string_view head_log,
                                               const std::string& head_binary,
                                               const RpcWorkerAccess& access);

}  // namespace gb10tune::verify
