// A TCP port of 127.0.0.1 held by the test itself, for the refusals of a start whose port is
// taken.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace gb10tune::testing {

// A socket of this process on 127.0.0.1:`port` (bound; listening when asked), closed with it.
struct HeldPort {
  int fd = -1;
  HeldPort(int port, bool listening) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        (listening && ::listen(fd, 4) != 0)) {
      ADD_FAILURE() << "cannot hold port " << port;
    }
  }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  ~HeldPort() { ::close(fd); }
};

}  // namespace gb10tune::testing
