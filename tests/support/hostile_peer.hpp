// A local TCP peer that misbehaves on purpose, for the network clients' bounds: it accepts
// connections on 127.0.0.1, reads the request, then runs a script (drip bytes slowly, flood,
// never answer) until the client goes away or the test ends.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <thread>

namespace gb10tune::testing {

// The accepted connection as a script sees it.
class PeerConnection {
 public:
  PeerConnection(int fd, const std::atomic<bool>& stop) : m_fd(fd), m_stop(stop) {}
  // Sends every byte; false once the client has gone (or the test ends).
  bool send(std::string_view bytes);
  // Sends `count` copies of `filler` in pieces; false once the client has gone.
  bool send_repeated(std::string_view filler, std::size_t count);
  // Sends `bytes` one byte at a time, `pause` apart; false once the client has gone.
  bool drip(std::string_view bytes, std::chrono::milliseconds pause);
  // Waits until the client closes its end or the test ends.
  void wait_for_close();
  // Bytes of the request read before the script started.
  const std::string& request() const { return m_request; }
  void set_request(std::string request) { m_request = std::move(request); }
  // The accepted socket (blocking), for scripts that speak another protocol on it (TLS).
  int fd() const { return m_fd; }
  // Whether the test is ending: a script's own loops stop then.
  bool stopping() const { return m_stop.load(); }

 private:
  int m_fd;
  const std::atomic<bool>& m_stop;
  std::string m_request;
};

// What the peer does after the request's blank line (or at once: PeerStart::at_once).
using PeerScript = std::function<void(PeerConnection&)>;

// When a script starts: after the request's blank line (HTTP), or as soon as the connection is
// accepted (a script that reads the client itself: a TLS server, a peer that waits).
enum class PeerStart { after_request, at_once };

// Listens on 127.0.0.1 (a free port) in a thread of its own, running `script` for each
// connection in turn; the destructor ends the script at its next send or wait.
class HostilePeer {
 public:
  explicit HostilePeer(PeerScript script, PeerStart start = PeerStart::after_request);
  HostilePeer(const HostilePeer&) = delete;
  HostilePeer& operator=(const HostilePeer&) = delete;
  ~HostilePeer();

  int port() const { return m_port; }
  // "http://127.0.0.1:PORT".
  std::string url() const;

 private:
  void serve();

  PeerScript m_script;
  PeerStart m_start;
  int m_listen_fd = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

}  // namespace gb10tune::testing
