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

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/strings.hpp"

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

// Waits for `events` on `fd`; true when ready, false at the deadline. Past the deadline it is
// false whatever poll() would answer, so that a caller's loop ends even where a socket keeps
// reporting ready (an error or hang-up) while the call after it keeps answering EAGAIN.
bool wait_for(int fd, short events, Deadline deadline) {
  while (std::chrono::steady_clock::now() < deadline) {
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
  return false;
}

Error network_error(const std::string& peer, const std::string& what) {
  return Error{fmt::format("{}: {}", peer, what), ExitCode::failed};
}

// Connects one resolved address; the socket on success, else none with `why` set.
Fd connect_one(const addrinfo& address, const std::string& peer, Deadline deadline,
               std::string& why) {
  Fd fd(::socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                 address.ai_protocol));
  if (!fd.valid()) {
    why = fmt::format("cannot open a socket for {}: {}", peer, std::strerror(errno));
    return fd;
  }
  int error = 0;
  if (::connect(fd.get(), address.ai_addr, address.ai_addrlen) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      if (!wait_for(fd.get(), POLLOUT, deadline)) {
        why = fmt::format("timed out connecting to {}", peer);
        return Fd();
      }
      socklen_t length = sizeof(error);
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    }
  }
  if (error != 0) {
    why = error == ECONNREFUSED
              ? fmt::format("connection refused: nothing listens on {}", peer)
              : fmt::format("cannot connect to {}: {}", peer, std::strerror(error));
    return Fd();
  }
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

using AddressList = std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)>;

// A lookup running on a thread of its own. Shared with the thread: whoever lets go last (the
// thread, or a waiter that gave up on it) frees it and its result.
struct Lookup {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  int rc = 0;
  addrinfo* found = nullptr;
  ~Lookup() {
    if (found != nullptr) {
      ::freeaddrinfo(found);
    }
  }
};

addrinfo stream_hints(int flags) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | flags;
  return hints;
}

// The addresses of host:port. A numeric address is parsed at once; a name is looked up with
// getaddrinfo() on a thread of its own and waited for until `deadline` only (getaddrinfo()
// cannot be interrupted: a lookup that hangs ends in the background and is dropped then).
Expected<AddressList> resolve(const std::string& host, int port, Deadline deadline) {
  const std::string service = std::to_string(port);
  const addrinfo numeric = stream_hints(AI_NUMERICHOST);
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), service.c_str(), &numeric, &found) == 0) {
    return AddressList(found, &::freeaddrinfo);
  }
  // The deadline in words, as the caller set it (rounded to 100 ms).
  const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           deadline - std::chrono::steady_clock::now())
                           .count();
  const std::chrono::milliseconds left{(std::max<std::int64_t>(left_ms, 0) + 50) / 100 * 100};
  auto lookup = std::make_shared<Lookup>();
  try {
    std::thread([lookup, host, service] {
      const addrinfo hints = stream_hints(0);
      addrinfo* result = nullptr;
      const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &result);
      const std::lock_guard<std::mutex> lock(lookup->mutex);
      lookup->rc = rc;
      lookup->found = result;
      lookup->done = true;
      lookup->finished.notify_all();
    }).detach();
  } catch (const std::system_error& error) {
    return Error{fmt::format("cannot resolve the host name '{}': {}", host, error.what()),
                 ExitCode::failed};
  }
  std::unique_lock<std::mutex> lock(lookup->mutex);
  if (!lookup->finished.wait_until(lock, deadline, [&lookup] { return lookup->done; })) {
    return Error{fmt::format("could not resolve the host name '{}' within {} (is a DNS server "
                             "reachable? an address instead of the name needs none)",
                             host, format_duration(left)),
                 ExitCode::failed};
  }
  if (lookup->rc != 0) {
    return Error{fmt::format("cannot resolve the host name '{}': {}; check the address", host,
                             ::gai_strerror(lookup->rc)),
                 ExitCode::failed};
  }
  return AddressList(std::exchange(lookup->found, nullptr), &::freeaddrinfo);
}

}  // namespace

Expected<TcpConnection> TcpConnection::connect(const std::string& host, int port,
                                               Deadline deadline) {
  const std::string peer = format_host_port(host, port);
  if (port <= 0 || port > 65535) {
    return Error{fmt::format("{}: bad port {}", peer, port), ExitCode::usage};
  }
  auto addresses = resolve(host, port, deadline);
  if (!addresses) {
    return addresses.error();
  }
  std::string why = fmt::format("{} has no address", host);
  Fd fd;
  for (const addrinfo* address = addresses->get(); address != nullptr && !fd.valid();
       address = address->ai_next) {
    fd = connect_one(*address, peer, deadline, why);
  }
  if (!fd.valid()) {
    return Error{why, ExitCode::failed};
  }
  return TcpConnection(std::move(fd), peer);
}

bool TcpConnection::wait_ready(bool for_write, Deadline deadline) const {
  return wait_for(m_fd.get(), for_write ? POLLOUT : POLLIN, deadline);
}

Status TcpConnection::send_all(const std::vector<std::uint8_t>& bytes, Deadline deadline) {
  return send_all(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                  deadline);
}

Status TcpConnection::send_all(std::string_view bytes, Deadline deadline) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(m_fd.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(m_fd.get(), POLLOUT, deadline)) {
        return network_error(m_peer, "timed out sending");
      }
      continue;
    }
    return network_error(m_peer, fmt::format("send failed: {}", std::strerror(errno)));
  }
  return {};
}

Expected<std::size_t> TcpConnection::receive_some(std::string& out, std::size_t max,
                                                  Deadline deadline) {
  const std::size_t before = out.size();
  out.resize(before + max);
  while (true) {
    const ssize_t n = ::recv(m_fd.get(), out.data() + before, max, 0);
    if (n >= 0) {
      out.resize(before + static_cast<std::size_t>(n));
      return static_cast<std::size_t>(n);
    }
    const int error = errno;
    if (error == EINTR) {
      continue;
    }
    if (error == EAGAIN || error == EWOULDBLOCK) {
      if (wait_for(m_fd.get(), POLLIN, deadline)) {
        continue;
      }
      out.resize(before);
      return network_error(m_peer, "no answer in time");
    }
    out.resize(before);
    return network_error(m_peer, error == ECONNRESET
                                     ? std::string("the peer closed the connection (reset)")
                                     : fmt::format("receive failed: {}", std::strerror(error)));
  }
}

Expected<std::vector<std::uint8_t>> TcpConnection::receive_exact(std::size_t count,
                                                                 Deadline deadline) {
  std::vector<std::uint8_t> bytes(count);
  std::size_t received = 0;
  while (received < count) {
    const ssize_t n = ::recv(m_fd.get(), bytes.data() + received, count - received, 0);
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
      if (!wait_for(m_fd.get(), POLLIN, deadline)) {
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
