// TLS over a TcpConnection (OpenSSL), with the same deadlines as the TCP layer: a server that
// drips or stalls the handshake costs at most the caller's deadline. The server's certificate is
// always verified against the system CA store (SSL_CERT_FILE / SSL_CERT_DIR point it elsewhere)
// and must name the host that was asked for; TLS 1.2 is the minimum. There is no way to turn the
// checks off.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "gb10tune/platform/tcp_connection.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// An established TLS session over its own TCP connection. Not copyable; closes on destruction.
class TlsConnection {
 public:
  // Runs the client handshake over `tcp` for `host` (a name, sent as SNI and checked against the
  // certificate, or an address, checked as one) before `deadline`. An Error (ExitCode::failed)
  // naming host:port and the reason in words with its fix: the certificate is not trusted (a
  // private CA: SSL_CERT_FILE), expired or not yet valid, issued for another name; the server
  // did not speak TLS, closed the connection, offers only old TLS versions; the deadline passed.
  static Expected<TlsConnection> start(TcpConnection tcp, const std::string& host,
                                       Deadline deadline);

  TlsConnection(TlsConnection&& other) noexcept;
  TlsConnection& operator=(TlsConnection&& other) noexcept;
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;
  ~TlsConnection();

  // Sends every byte before `deadline`; an Error on a broken session or the deadline.
  Status send_all(std::string_view bytes, Deadline deadline);
  // Appends what arrives next (1 to `max` bytes) to `out` and returns how many; 0 once the peer
  // has closed the session (with or without its close_notify: HTTP frames its own answers). An
  // Error on a broken session, or when nothing arrives before `deadline`.
  Expected<std::size_t> receive_some(std::string& out, std::size_t max, Deadline deadline);

  // "host:port" of the TCP connection under it.
  const std::string& peer() const;

 private:
  struct Session;
  explicit TlsConnection(std::unique_ptr<Session> session);
  std::unique_ptr<Session> m_session;
};

}  // namespace gb10tune::platform
