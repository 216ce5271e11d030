// A plain TCP connection whose every operation is bounded by a deadline: the socket layer under
// the llama.cpp RPC client. No protocol here, just bytes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gb10tune/platform/fd.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// The instant after which a network operation gives up.
using Deadline = std::chrono::steady_clock::time_point;

// An open TCP connection (IPv4 or IPv6). Not copyable; closes the socket on destruction.
class TcpConnection {
 public:
  // Connects to host:port (a name or an address) before `deadline`; a numeric address is never
  // looked up, a name is resolved on a thread of its own so that a resolver that hangs costs no
  // more than the deadline. An Error (ExitCode::failed) naming host:port and the reason: the
  // name cannot be resolved (or not in time), refused, unreachable, timed out.
  static Expected<TcpConnection> connect(const std::string& host, int port, Deadline deadline);

  TcpConnection(TcpConnection&& other) noexcept = default;
  TcpConnection& operator=(TcpConnection&& other) noexcept = default;
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;
  ~TcpConnection() = default;

  // Sends every byte before `deadline`; an Error on a closed peer, a reset or the deadline.
  Status send_all(std::string_view bytes, Deadline deadline);
  Status send_all(const std::vector<std::uint8_t>& bytes, Deadline deadline);
  // Receives exactly `count` bytes before `deadline`; an Error saying how many arrived when the
  // peer closes early, on a reset, or at the deadline.
  Expected<std::vector<std::uint8_t>> receive_exact(std::size_t count, Deadline deadline);
  // Appends what arrives next (1 to `max` bytes) to `out` and returns how many; 0 once the peer
  // has closed its end. An Error on a reset, or when nothing arrives before `deadline`.
  Expected<std::size_t> receive_some(std::string& out, std::size_t max, Deadline deadline);

  // "host:port" as given to connect ("[::1]:50052" for IPv6 addresses).
  const std::string& peer() const { return m_peer; }
  // The socket, for a layer that runs over this connection (TLS); still owned by it.
  int native_handle() const { return m_fd.get(); }
  // Waits until the socket can be written (`for_write`) or read; false when `deadline` passes
  // first.
  bool wait_ready(bool for_write, Deadline deadline) const;

 private:
  TcpConnection(Fd fd, std::string peer) : m_fd(std::move(fd)), m_peer(std::move(peer)) {}
  Fd m_fd;
  std::string m_peer;
};

}  // namespace gb10tune::platform
