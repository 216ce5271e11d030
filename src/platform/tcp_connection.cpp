// TCP with deadlines: non-blocking sockets and poll(), so that a silent or slow peer costs at
// most the caller's deadline.
#include "gb10tune/platform/tcp_connection.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gb10tune::platform {

namespace {

// Milliseconds left before `deadline`, at least 0 and at most an int.
int millis_left(Deadline deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) {
    return 0;
  }
  return left.count() > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(left.count());
}

// Waits for `events` on `fd`; true when ready, false at the deadline.
bool wait_for(int fd, short events, Deadline deadline) {
  while (true) {
    pollfd entry{fd, events, 0};
    const int rc = ::poll(&entry, 1, millis_left(deadline));
    if (rc > 0) {
      return true;
    }
    if (rc == 0) {
      return false;
    }
    if (errno != EINTR) {
      return true;  // let the following call report the error
    }
  }
}

Error network_error(const std::string& peer, const std::string& what) {
  return Error{fmt::format("{}: {}", peer, what), ExitCode::failed};
}

// Connects one resolved address; the socket on success, else -1 with `why` set.
int connect_one(const addrinfo& address, Deadline deadline, std::string& why) {
  const int fd = ::socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                          address.ai_protocol);
  if (fd < 0) {
    why = std::strerror(errno);
    return -1;
  }
  if (::connect(fd, address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      why = std::strerror(errno);
      ::close(fd);
      return -1;
    }
    if (!wait_for(fd, POLLOUT, deadline)) {
      why = "timed out connecting";
      ::close(fd);
      return -1;
    }
    int error = 0;
    socklen_t length = sizeof(error);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      why = std::strerror(error);
      ::close(fd);
      return -1;
    }
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

}  // namespace

std::string join_host_port(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
}

Expected<TcpConnection> TcpConnection::connect(const std::string& host, int port,
                                               Deadline deadline) {
  const std::string peer = join_host_port(host, port);
  if (port <= 0 || port > 65535) {
    return Error{fmt::format("{}: bad port {}", peer, port), ExitCode::usage};
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    return network_error(peer, fmt::format("cannot resolve '{}': {}", host, ::gai_strerror(rc)));
  }
  std::string why = "no address";
  int fd = -1;
  for (const addrinfo* address = found; address != nullptr && fd < 0; address = address->ai_next) {
    fd = connect_one(*address, deadline, why);
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    return network_error(peer, fmt::format("cannot connect: {}", why));
  }
  return TcpConnection(fd, peer);
}

TcpConnection::TcpConnection(TcpConnection&& other) noexcept
    : m_fd(other.m_fd), m_peer(std::move(other.m_peer)) {
  other.m_fd = -1;
}

TcpConnection& TcpConnection::operator=(TcpConnection&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = other.m_fd;
    m_peer = std::move(other.m_peer);
    other.m_fd = -1;
  }
  return *this;
}

TcpConnection::~TcpConnection() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

Status TcpConnection::send_all(const std::vector<std::uint8_t>& bytes, Deadline deadline) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(m_fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(m_fd, POLLOUT, deadline)) {
        return network_error(m_peer, "timed out sending");
      }
      continue;
    }
    return network_error(m_peer, fmt::format("send failed: {}", std::strerror(errno)));
  }
  return {};
}

Expected<std::vector<std::uint8_t>> TcpConnection::receive_exact(std::size_t count,
                                                                 Deadline deadline) {
  std::vector<std::uint8_t> bytes(count);
  std::size_t received = 0;
  while (received < count) {
    const ssize_t n = ::recv(m_fd, bytes.data() + received, count - received, 0);
    if (n > 0) {
      received += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) {
      return network_error(
          m_peer, fmt::format("connection closed after {} of {} expected bytes", received, count));
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(m_fd, POLLIN, deadline)) {
        return network_error(
            m_peer, fmt::format("no answer in time ({} of {} expected bytes)", received, count));
      }
      continue;
    }
    if (errno == ECONNRESET) {
      return network_error(m_peer, fmt::format("connection closed (reset by the peer) after {} of "
                                               "{} expected bytes",
                                               received, count));
    }
    return network_error(m_peer, fmt::format("receive failed: {}", std::strerror(errno)));
  }
  return bytes;
}

}  // namespace gb10tune::platform
