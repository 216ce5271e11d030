#include "gb10tune/platform/port_probe.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gb10tune/platform/fd.hpp"

namespace gb10tune::platform {

Expected<PortState> probe_port(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc =
          ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    return Error{
        fmt::format("cannot resolve {} to bind port {}: {}", host, port, ::gai_strerror(rc))};
  }
  int in_use = 0;
  int other = 0;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      other = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) == 0) {
      ::freeaddrinfo(found);
      return PortState::free;
    }
    (errno == EADDRINUSE ? in_use : other) = errno;
  }
  ::freeaddrinfo(found);
  if (in_use != 0) {
    return PortState::taken;
  }
  return Error{fmt::format("cannot bind {}:{}: {}", host, port,
                           std::strerror(other != 0 ? other : EADDRNOTAVAIL))};
}

}  // namespace gb10tune::platform
