// Opening a request's stream: TCP, a proxy's CONNECT tunnel, TLS. The tunnel's answer is read up
// to its blank line only, so that the TLS handshake that follows starts at the right byte.
#include "gb10tune/http/http_stream.hpp"

#include <fmt/format.h>

#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::http {

namespace {

// The most a proxy's answer to CONNECT may hold.
constexpr std::size_t kMaxTunnelAnswer = 16 * 1024;

// Asks the proxy on `tcp` for a tunnel to host:port and reads its answer's head.
Status open_tunnel(platform::TcpConnection& tcp, const std::string& host, int port,
                   platform::Deadline deadline) {
  const std::string target = format_host_port(host, port);
  const std::string request =
      fmt::format("CONNECT {0} HTTP/1.1\r\nHost: {0}\r\nUser-Agent: {1}/{2}\r\n\r\n", target,
                  kToolName, kToolVersion);
  if (auto sent = tcp.send_all(request, deadline); !sent) {
    return sent.error();
  }
  std::string answer;
  while (answer.find("\r\n\r\n") == std::string::npos) {
    if (answer.size() >= kMaxTunnelAnswer) {
      return Error{fmt::format("the proxy {} sent more than {} bytes of headers for CONNECT {}",
                               tcp.peer(), kMaxTunnelAnswer, target),
                   ExitCode::failed};
    }
    // One byte at a time: what follows the blank line belongs to the TLS handshake.
    auto got = tcp.receive_some(answer, 1, deadline);
    if (!got) {
      return got.error();
    }
    if (*got == 0) {
      return Error{fmt::format("the proxy {} closed the connection instead of answering CONNECT "
                               "{}; check HTTPS_PROXY",
                               tcp.peer(), target),
                   ExitCode::failed};
    }
  }
  const std::string status_line = answer.substr(0, answer.find("\r\n"));
  const auto words = split(status_line, ' ');
  if (words.size() < 2 || !starts_with(words[0], "HTTP/1.") || words[1].size() != 3 ||
      words[1][0] != '2') {
    return Error{fmt::format("the proxy {} refused the tunnel to {}: '{}'; check HTTPS_PROXY, "
                             "or list the host in NO_PROXY to go direct",
                             tcp.peer(), target, status_line),
                 ExitCode::failed};
  }
  return {};
}

}  // namespace

Expected<HttpStream> HttpStream::open(const Route& route, platform::Deadline deadline) {
  auto tcp = platform::TcpConnection::connect(route.connect_host, route.connect_port, deadline);
  if (!tcp) {
    return tcp.error();
  }
  if (route.tls_host.empty()) {
    return HttpStream(std::move(*tcp));
  }
  if (route.tunnel) {
    if (Status tunnel = open_tunnel(*tcp, route.tls_host, route.tls_port, deadline); !tunnel) {
      return tunnel.error();
    }
  }
  auto tls = platform::TlsConnection::start(std::move(*tcp), route.tls_host, deadline);
  if (!tls) {
    return tls.error();
  }
  return HttpStream(std::move(*tls));
}

Status HttpStream::send_all(std::string_view bytes, platform::Deadline deadline) {
  return std::visit([&](auto& connection) { return connection.send_all(bytes, deadline); },
                    m_connection);
}

Expected<std::size_t> HttpStream::receive_some(std::string& out, std::size_t max,
                                               platform::Deadline deadline) {
  return std::visit([&](auto& connection) { return connection.receive_some(out, max, deadline); },
                    m_connection);
}

}  // namespace gb10tune::http
