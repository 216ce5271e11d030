// The https tests' loopback peers: OpenSSL's server side over the accepted socket, and a relay
// that moves bytes between it and a plain peer (or, for the proxy, between two plain sockets).
#include "support/tls_peer.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <functional>

#include "support/test_context.hpp"

namespace gb10tune::testing {

namespace {

// A blocking connection to 127.0.0.1:port; -1 when nothing listens.
int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One side of a relay: reads what it can into `buffer`; false at its end.
using Reader = std::function<bool(std::string& buffer)>;
using Writer = std::function<bool(const std::string& buffer)>;

// Relays between a client (read through `from_client` when `client_fd` is readable or
// `client_pending` says bytes wait) and a plain backend socket, until either side ends.
void relay(const PeerConnection& c, int backend, const Reader& from_client, const Writer& to_client,
           const std::function<bool()>& client_pending) {
  std::string buffer;
  while (!c.stopping()) {
    std::array<pollfd, 2> fds{pollfd{c.fd(), POLLIN, 0}, pollfd{backend, POLLIN, 0}};
    if (!client_pending() && ::poll(fds.data(), fds.size(), 100) <= 0) {
      continue;
    }
    if (client_pending() || fds[0].revents != 0) {
      buffer.clear();
      if (!from_client(buffer) || ::send(backend, buffer.data(), buffer.size(), MSG_NOSIGNAL) < 0) {
        return;
      }
    }
    if (fds[1].revents != 0) {
      buffer.resize(16 * 1024);
      const ssize_t got = ::recv(backend, buffer.data(), buffer.size(), 0);
      if (got <= 0) {
        return;
      }
      buffer.resize(static_cast<std::size_t>(got));
      if (!to_client(buffer)) {
        return;
      }
    }
  }
}

// The plain side of a relay over the client's socket.
bool plain_read(int fd, std::string& buffer) {
  buffer.resize(16 * 1024);
  const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
  buffer.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return got > 0;
}

}  // namespace

std::string test_ca_file() {
  return fixture("tls/ca.pem").string();
}

std::string dated_ca_file() {
  return fixture("tls/dated-ca.pem").string();
}

std::string https_url(const HostilePeer& peer) {
  return fmt::format("https://127.0.0.1:{}", peer.port());
}

PeerScript tls_front(const std::string& name, int backend_port) {
  const std::string cert = fixture("tls/" + name + ".pem").string();
  const std::string key = fixture("tls/" + name + ".key").string();
  return [cert, key, backend_port](PeerConnection& c) {
    const timeval patience{5, 0};  // a client that stalls its handshake ends it after 5 s
    ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_server_method()),
                                                              &SSL_CTX_free);
    if (SSL_CTX_use_certificate_file(context.get(), cert.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_use_PrivateKey_file(context.get(), key.c_str(), SSL_FILETYPE_PEM) != 1) {
      ADD_FAILURE() << "tls_front: cannot load " << cert;
      return;
    }
    std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context.get()), &SSL_free);
    SSL_set_fd(ssl.get(), c.fd());
    if (SSL_accept(ssl.get()) != 1) {
      ERR_clear_error();
      return;
    }
    const int backend = connect_loopback(backend_port);
    if (backend < 0) {
      return;
    }
    SSL* session = ssl.get();
    relay(
        c, backend,
        [session](std::string& buffer) {
          buffer.resize(16 * 1024);
          std::size_t got = 0;
          const bool ok = SSL_read_ex(session, buffer.data(), buffer.size(), &got) == 1;
          buffer.resize(got);
          return ok;
        },
        [session](const std::string& buffer) {
          std::size_t sent = 0;
          return SSL_write_ex(session, buffer.data(), buffer.size(), &sent) == 1;
        },
        [session] { return SSL_pending(session) > 0; });
    SSL_shutdown(session);
    ERR_clear_error();
    ::close(backend);
  };
}

PeerScript connect_proxy(std::shared_ptr<PeerLog> log) {
  return [log](PeerConnection& c) {
    const std::string line = c.request().substr(0, c.request().find("\r\n"));
    {
      const std::lock_guard lock(log->mutex);
      log->request_lines.push_back(line);
    }
    ++log->requests;
    const auto space = line.find(' ');
    const std::string target = line.substr(space + 1, line.find(' ', space + 1) - space - 1);
    const int port = std::atoi(target.substr(target.rfind(':') + 1).c_str());
    const int backend = line.starts_with("CONNECT ") ? connect_loopback(port) : -1;
    if (backend < 0) {
      c.send("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    c.send("HTTP/1.1 200 Connection established\r\n\r\n");
    const int client = c.fd();
    relay(
        c, backend, [client](std::string& buffer) { return plain_read(client, buffer); },
        [&c](const std::string& buffer) { return c.send(buffer); }, [] { return false; });
    ::close(backend);
  };
}

PeerScript answers_plain_http() {
  return [](PeerConnection& c) {
    std::string buffer;
    if (plain_read(c.fd(), buffer)) {
      c.send(
          "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n"
          "Connection: close\r\n\r\nbad request\n");
    }
  };
}

PeerScript never_answers() {
  return [](PeerConnection& c) { c.wait_for_close(); };
}

}  // namespace gb10tune::testing
