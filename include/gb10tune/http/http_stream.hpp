// The byte stream of one HTTP request: a TCP connection to the server or a proxy, for https a
// TLS session over it, through a proxy's CONNECT tunnel when there is one. The HTTP client picks
// the stream by the request's route; everything above it reads and writes bytes the same way.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "gb10tune/platform/tcp_connection.hpp"
#include "gb10tune/platform/tls_connection.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::http {

// How a request reaches its server.
struct Route {
  std::string connect_host;  // where to connect: the server, or a proxy
  int connect_port = 80;
  // For https: the server whose certificate is checked (and its port); empty for plain http.
  std::string tls_host;
  int tls_port = 443;
  // connect_host is an HTTP proxy: ask it for a CONNECT tunnel to tls_host:tls_port first.
  bool tunnel = false;
};

// An open stream, plain or TLS. Not copyable.
class HttpStream {
 public:
  // Connects along `route` before `deadline`: TCP, then the proxy's CONNECT (which must answer
  // 2xx), then the TLS handshake. An Error (ExitCode::failed) naming the host and what failed:
  // the TCP or TLS layer's (platform/tls_connection.hpp), or the proxy's refusal with its status.
  static Expected<HttpStream> open(const Route& route, platform::Deadline deadline);

  // As TcpConnection::send_all and receive_some, over TLS when the route asked for it.
  Status send_all(std::string_view bytes, platform::Deadline deadline);
  Expected<std::size_t> receive_some(std::string& out, std::size_t max,
                                     platform::Deadline deadline);

 private:
  explicit HttpStream(std::variant<platform::TcpConnection, platform::TlsConnection> connection)
      : m_connection(std::move(connection)) {}
  std::variant<platform::TcpConnection, platform::TlsConnection> m_connection;
};

}  // namespace gb10tune::http
