#include "support/hostile_peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gb10tune::testing {

namespace {

// Waits up to 100 ms for `events`; true when ready (or on an error the next call reports).
bool ready(int fd, short events) {
  pollfd entry{fd, events, 0};
  const int rc = ::poll(&entry, 1, 100);
  return rc > 0 || (rc < 0 && errno != EINTR);
}

// Reads the request up to its blank line (and a body that arrived with it): the script starts
// once the client waits for an answer.
std::string read_request(int fd, const std::atomic<bool>& stop) {
  std::string request;
  char buffer[4096];
  while (!stop.load() && request.find("\r\n\r\n") == std::string::npos) {
    if (!ready(fd, POLLIN)) {
      continue;
    }
    const ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got <= 0) {
      break;
    }
    request.append(buffer, static_cast<std::size_t>(got));
  }
  return request;
}

}  // namespace

bool PeerConnection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    if (m_stop.load()) {
      return false;
    }
    if (!ready(m_fd, POLLOUT)) {
      continue;
    }
    const ssize_t sent = ::send(m_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
      continue;
    }
    if (sent <= 0) {
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

bool PeerConnection::send_repeated(std::string_view filler, std::size_t count) {
  std::string piece;
  const std::size_t per_piece =
      std::max<std::size_t>(1, (256 * 1024) / std::max<std::size_t>(1, filler.size()));
  for (std::size_t i = 0; i < std::min(per_piece, count); ++i) {
    piece += filler;
  }
  for (std::size_t done = 0; done < count; done += per_piece) {
    const std::size_t now = std::min(per_piece, count - done);
    if (!send(std::string_view(piece).substr(0, now * filler.size()))) {
      return false;
    }
  }
  return true;
}

bool PeerConnection::drip(std::string_view bytes, std::chrono::milliseconds pause) {
  for (const char byte : bytes) {
    if (!send(std::string_view(&byte, 1))) {
      return false;
    }
    const auto until = std::chrono::steady_clock::now() + pause;
    while (std::chrono::steady_clock::now() < until) {
      if (m_stop.load()) {
        return false;
      }
      // A client that has gone makes the socket readable (end of file).
      pollfd entry{m_fd, POLLIN, 0};
      if (::poll(&entry, 1, 20) > 0) {
        char probe = 0;
        if (::recv(m_fd, &probe, 1, MSG_DONTWAIT) <= 0) {
          return false;
        }
      }
    }
  }
  return true;
}

void PeerConnection::wait_for_close() {
  char buffer[4096];
  while (!m_stop.load()) {
    if (!ready(m_fd, POLLIN)) {
      continue;
    }
    if (::recv(m_fd, buffer, sizeof(buffer), 0) <= 0) {
      return;
    }
  }
}

HostilePeer::HostilePeer(PeerScript script, PeerStart start)
    : m_script(std::move(script)), m_start(start) {
  m_listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (m_listen_fd < 0 ||
      ::bind(m_listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(m_listen_fd, 8) != 0 ||
      ::getsockname(m_listen_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string why = std::strerror(errno);
    if (m_listen_fd >= 0) {
      ::close(m_listen_fd);
    }
    throw std::runtime_error("hostile peer: cannot listen on 127.0.0.1: " + why);
  }
  m_port = ntohs(address.sin_port);
  m_thread = std::thread([this] { serve(); });
}

HostilePeer::~HostilePeer() {
  m_stop.store(true);
  m_thread.join();
  ::close(m_listen_fd);
}

std::string HostilePeer::url() const {
  return "http://127.0.0.1:" + std::to_string(m_port);
}

void HostilePeer::serve() {
  // A script that writes to a client that has gone (OpenSSL's writes in a TLS server do not
  // ask for MSG_NOSIGNAL) gets EPIPE rather than ending the test binary with SIGPIPE.
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
  while (!m_stop.load()) {
    if (!ready(m_listen_fd, POLLIN)) {
      continue;
    }
    const int fd = ::accept4(m_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    PeerConnection connection(fd, m_stop);
    if (m_start == PeerStart::after_request) {
      connection.set_request(read_request(fd, m_stop));
    }
    m_script(connection);
    ::close(fd);
  }
}

}  // namespace gb10tune::testing
