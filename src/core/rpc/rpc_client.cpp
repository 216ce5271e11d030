// The RPC query over a TcpConnection: HELLO first (the worker refuses anything else), then
// DEVICE_COUNT and GET_DEVICE_MEMORY per device. Answers of an unexpected size are refused
// before their payload is read, so a hostile size prefix never allocates.
#include "gb10tune/rpc/rpc_client.hpp"

#include <fmt/format.h>

#include "gb10tune/platform/tcp_connection.hpp"

namespace gb10tune::rpc {

namespace {

using platform::Deadline;
using platform::TcpConnection;

// The largest hello answer read for its version (today's is 28 bytes).
constexpr std::uint64_t kMaxHelloAnswer = 256;

std::string fix_for(const Endpoint& endpoint) {
  return fmt::format(
      "check that rpc-server runs there (gb10tune rpc status, or start it with "
      "`gb10tune rpc start --host {} --port {}`) and that no firewall blocks the port",
      endpoint.host, endpoint.port);
}

Error worker_error(const Endpoint& endpoint, std::string_view step, const Error& cause) {
  return Error{fmt::format("RPC worker {}: {}: {}", endpoint.to_string(), step, cause.message),
               ExitCode::failed};
}

// Sends `request` and reads an answer of exactly `size` bytes.
Expected<std::vector<std::uint8_t>> exchange(TcpConnection& connection, const Endpoint& endpoint,
                                             std::string_view step,
                                             const std::vector<std::uint8_t>& request,
                                             std::size_t size, Deadline deadline) {
  if (auto sent = connection.send_all(request, deadline); !sent) {
    return worker_error(endpoint, step, sent.error());
  }
  auto prefix = connection.receive_exact(8, deadline);
  if (!prefix) {
    return worker_error(endpoint, step, prefix.error());
  }
  const std::uint64_t announced = decode_size(*prefix);
  if (announced != size) {
    return Error{fmt::format("RPC worker {}: {}: the answer announces {} bytes where llama.cpp's "
                             "RPC protocol sends {}: this is not an rpc-server, or one of an "
                             "incompatible protocol version",
                             endpoint.to_string(), step, announced, size),
                 ExitCode::failed};
  }
  auto payload = connection.receive_exact(size, deadline);
  if (!payload) {
    return worker_error(endpoint, step, payload.error());
  }
  return payload;
}

// The hello: like exchange(), except that an answer of another small size is still read, for
// the version in its first three bytes (every protocol version starts its answer with them).
Expected<std::vector<std::uint8_t>> exchange_hello(TcpConnection& connection,
                                                   const Endpoint& endpoint, Deadline deadline) {
  if (auto sent = connection.send_all(encode_hello(), deadline); !sent) {
    return worker_error(endpoint, "hello", sent.error());
  }
  auto prefix = connection.receive_exact(8, deadline);
  if (!prefix) {
    return worker_error(endpoint, "hello", prefix.error());
  }
  const std::uint64_t announced = decode_size(*prefix);
  if (announced < 3 || announced > kMaxHelloAnswer) {
    return Error{
        fmt::format("RPC worker {}: hello: the answer announces {} bytes where llama.cpp's "
                    "RPC protocol sends {}: this is not an rpc-server",
                    endpoint.to_string(), announced, kHelloAnswerSize),
        ExitCode::failed};
  }
  auto payload = connection.receive_exact(static_cast<std::size_t>(announced), deadline);
  if (!payload) {
    return worker_error(endpoint, "hello", payload.error());
  }
  return payload;
}

}  // namespace

std::uint64_t WorkerInfo::free_bytes() const {
  std::uint64_t sum = 0;
  for (const auto& device : devices) {
    sum += device.free_bytes;
  }
  return sum;
}

std::uint64_t WorkerInfo::total_bytes() const {
  std::uint64_t sum = 0;
  for (const auto& device : devices) {
    sum += device.total_bytes;
  }
  return sum;
}

Expected<ProtocolVersion> hello_worker(const Endpoint& endpoint,
                                       std::chrono::milliseconds timeout) {
  const Deadline deadline = std::chrono::steady_clock::now() + timeout;
  auto connection = TcpConnection::connect(endpoint.host, endpoint.port, deadline);
  if (!connection) {
    return Error{fmt::format("RPC worker {} is not reachable: {}", endpoint.to_string(),
                             connection.error().message),
                 ExitCode::failed};
  }
  auto hello = exchange_hello(*connection, endpoint, deadline);
  if (!hello) {
    return hello.error();
  }
  return decode_hello(*hello);
}

Expected<WorkerInfo> query_worker(const Endpoint& endpoint, std::chrono::milliseconds timeout,
                                  const ProtocolVersion& head) {
  const Deadline deadline = std::chrono::steady_clock::now() + timeout;
  auto connection = TcpConnection::connect(endpoint.host, endpoint.port, deadline);
  if (!connection) {
    return Error{fmt::format("RPC worker {} is not reachable: {}; {}", endpoint.to_string(),
                             connection.error().message, fix_for(endpoint)),
                 ExitCode::failed};
  }
  auto hello = exchange_hello(*connection, endpoint, deadline);
  if (!hello) {
    Error error = hello.error();
    error.message += fmt::format(
        " (rpc-server serves one client at a time: a running llama-server that uses this worker "
        "keeps it busy; a worker of another protocol version closes the connection after the "
        "hello; gb10tune speaks {})",
        head.to_string());
    return error;
  }
  WorkerInfo info;
  info.endpoint = endpoint;
  info.version = decode_hello(*hello);
  if (!compatible(info.version, head)) {
    return Error{fmt::format("RPC worker {} speaks RPC protocol {}, the head speaks {}: llama.cpp "
                             "refuses a worker of another major version or a newer minor "
                             "version; build rpc-server and llama-server from the same llama.cpp "
                             "commit",
                             endpoint.to_string(), info.version.to_string(), head.to_string()),
                 ExitCode::failed};
  }
  if (hello->size() != kHelloAnswerSize) {
    return Error{
        fmt::format("RPC worker {}: hello: an answer of {} bytes for protocol {} (llama.cpp "
                    "sends {}): not an rpc-server gb10tune understands",
                    endpoint.to_string(), hello->size(), info.version.to_string(),
                    kHelloAnswerSize),
        ExitCode::failed};
  }
  auto count_bytes =
      exchange(*connection, endpoint, "device count", encode_device_count(), 4, deadline);
  if (!count_bytes) {
    return count_bytes.error();
  }
  const std::uint32_t count = decode_device_count(*count_bytes);
  if (count == 0 || count > kMaxDevices) {
    return Error{fmt::format("RPC worker {} reports {} devices (expected 1 to {}): not a working "
                             "rpc-server",
                             endpoint.to_string(), count, kMaxDevices),
                 ExitCode::failed};
  }
  for (std::uint32_t device = 0; device < count; ++device) {
    auto memory = exchange(*connection, endpoint, fmt::format("memory of device {}", device),
                           encode_device_memory(device), 16, deadline);
    if (!memory) {
      return memory.error();
    }
    info.devices.push_back(decode_device_memory(*memory));
  }
  return info;
}

}  // namespace gb10tune::rpc
