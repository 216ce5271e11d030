// Asking a llama.cpp RPC worker (`rpc-server`) what it is: one short connection, HELLO, device
// count, each device's memory, then close. Every step is bounded by one deadline.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "gb10tune/rpc/rpc_protocol.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::rpc {

// What a worker answered.
struct WorkerInfo {
  Endpoint endpoint;
  ProtocolVersion version;
  std::vector<DeviceMemory> devices;  // in the worker's device order (RPC0, RPC1, …)

  // Free bytes over all devices.
  std::uint64_t free_bytes() const;
  // Total bytes over all devices.
  std::uint64_t total_bytes() const;
};

// Devices per worker beyond which an answer is taken as garbage.
inline constexpr std::uint32_t kMaxDevices = 64;

// Only the hello: the version `endpoint` announces, whatever it is (readiness of a worker just
// started). Fails like query_worker, except that no version is refused.
Expected<ProtocolVersion> hello_worker(const Endpoint& endpoint, std::chrono::milliseconds timeout);

// Queries `endpoint` within `timeout` (connect included). An Error (ExitCode::failed) naming
// the worker for: no connection; silence (it may be serving another client: rpc-server serves
// one connection at a time, and a running head holds it); a peer that closes mid-answer; an
// answer of the wrong size or an absurd device count (not an rpc-server, or another protocol);
// a protocol version `head` cannot use (both versions named).
Expected<WorkerInfo> query_worker(const Endpoint& endpoint, std::chrono::milliseconds timeout,
                                  const ProtocolVersion& head = kKnownVersion);

}  // namespace gb10tune::rpc
