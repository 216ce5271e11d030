// TLS client sessions with OpenSSL over non-blocking sockets: every handshake step, read and write
// waits through TcpConnection::wait_ready, so the caller's deadline bounds them all. A context is
// made per connection, so that SSL_CERT_FILE and SSL_CERT_DIR are read when the connection opens.
#include "gb10tune/platform/tls_connection.hpp"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace gb10tune::platform {

struct TlsConnection::Session {
  struct ContextFree {
    void operator()(SSL_CTX* context) const { SSL_CTX_free(context); }
  };
  struct SslFree {
    void operator()(SSL* ssl) const { SSL_free(ssl); }
  };

  TcpConnection tcp;
  std::unique_ptr<SSL_CTX, ContextFree> context;
  std::unique_ptr<SSL, SslFree> ssl;

  // Waits for what OpenSSL asked for after `rc`: true to retry, false when the error is final
  // (`ssl_error` set) or the deadline passed (`timed_out` set).
  bool wait_after(int rc, Deadline deadline, int& ssl_error, bool& timed_out) {
    ssl_error = SSL_get_error(ssl.get(), rc);
    if (ssl_error != SSL_ERROR_WANT_READ && ssl_error != SSL_ERROR_WANT_WRITE) {
      return false;
    }
    timed_out = !tcp.wait_ready(ssl_error == SSL_ERROR_WANT_WRITE, deadline);
    return !timed_out;
  }
};

namespace {

Error tls_error(const std::string& peer, const std::string& why) {
  return Error{fmt::format("{}: TLS failed: {}", peer, why), ExitCode::failed};
}

// An error of an established session (as TcpConnection words its own).
Error session_error(const std::string& peer, const std::string& why) {
  return Error{fmt::format("{}: {}", peer, why), ExitCode::failed};
}

// The fix for a certificate this machine does not trust, naming the CA store in use.
std::string trust_fix() {
  const char* file = std::getenv("SSL_CERT_FILE");
  const char* dir = std::getenv("SSL_CERT_DIR");
  std::string store = "the system CA store";
  if (file != nullptr || dir != nullptr) {
    store =
        fmt::format("the CA store named by{}{}", file ? fmt::format(" SSL_CERT_FILE={}", file) : "",
                    dir ? fmt::format(" SSL_CERT_DIR={}", dir) : "");
  }
  return fmt::format(
      "the server's certificate is not trusted: no certificate authority in {} signed it. For a "
      "server with a private CA, point SSL_CERT_FILE at that CA's certificate (PEM); otherwise "
      "check that the URL reaches the server you meant (a proxy that intercepts TLS shows this "
      "too). gb10tune never skips this check",
      store);
}

// The reason a certificate was refused, in words with its fix.
std::string verify_failure(long code, const std::string& host) {
  switch (code) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return fmt::format(
          "name mismatch: the server's certificate was issued for another name, not '{}'. Use the "
          "host name the certificate names in the URL, or give the server a certificate for "
          "'{}'",
          host, host);
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the server's certificate has expired; check this machine's clock (date), or have "
             "the server's certificate renewed";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the server's certificate is not valid yet; check this machine's clock (date)";
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_UNTRUSTED:
      return trust_fix();
    default:
      return fmt::format(
          "the server's certificate was refused ({}); check the server's "
          "certificate chain",
          X509_verify_cert_error_string(code));
  }
}

// The reason a handshake failed that the certificate check did not refuse.
std::string handshake_failure(int ssl_error) {
  const unsigned long error = ERR_peek_error();
  if (error == 0 && (ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_ZERO_RETURN)) {
    return "the server closed the connection during the TLS handshake; is it a TLS (https) "
           "server? A plain http server there needs an http:// URL";
  }
  if (ERR_GET_LIB(error) == ERR_LIB_SSL) {
    switch (ERR_GET_REASON(error)) {
      case SSL_R_WRONG_VERSION_NUMBER:
      case SSL_R_PACKET_LENGTH_TOO_LONG:
      case SSL_R_UNKNOWN_PROTOCOL:
      case SSL_R_HTTP_REQUEST:
        return "the server did not speak TLS (its answer is not a TLS handshake: a plain http "
               "server?); use an http:// URL for a server without TLS";
      case SSL_R_UNSUPPORTED_PROTOCOL:
      case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
        return "the server offers only TLS versions older than 1.2, which gb10tune refuses; "
               "update the server's TLS settings";
      case SSL_R_UNEXPECTED_EOF_WHILE_READING:
        return "the server closed the connection during the TLS handshake; is it a TLS (https) "
               "server? A plain http server there needs an http:// URL";
      default:
        break;
    }
  }
  char text[256] = {};
  ERR_error_string_n(error, text, sizeof(text));
  return fmt::format("the TLS handshake failed ({})", text);
}

// Sets up a client context: verification on, the default CA paths, TLS 1.2 at least; false
// when OpenSSL refuses.
bool configure_client(SSL_CTX* context) {
  if (context == nullptr || SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_default_verify_paths(context) != 1) {
    return false;
  }
  SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_options(context, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE);
  return true;
}

// Names `host` to the session: checked as an address, or as a name (also sent as SNI).
bool name_the_host(SSL* ssl, const std::string& host) {
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) == 1) {
    return true;
  }
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size()) == 1 &&
         SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                  const_cast<char*>(host.c_str())) == 1;
}

}  // namespace

Expected<TlsConnection> TlsConnection::start(TcpConnection tcp, const std::string& host,
                                             Deadline deadline) {
  auto session = std::make_unique<Session>(Session{std::move(tcp), nullptr, nullptr});
  const std::string peer = session->tcp.peer();
  session->context.reset(SSL_CTX_new(TLS_client_method()));
  if (configure_client(session->context.get())) {
    session->ssl.reset(SSL_new(session->context.get()));
  }
  if (!session->ssl || SSL_set_fd(session->ssl.get(), session->tcp.native_handle()) != 1 ||
      !name_the_host(session->ssl.get(), host)) {
    ERR_clear_error();
    return tls_error(peer, "cannot set up a TLS session (OpenSSL could not be initialised)");
  }
  while (true) {
    ERR_clear_error();
    const int rc = SSL_connect(session->ssl.get());
    if (rc == 1) {
      return TlsConnection(std::move(session));
    }
    int ssl_error = 0;
    bool timed_out = false;
    if (session->wait_after(rc, deadline, ssl_error, timed_out)) {
      continue;
    }
    if (timed_out) {
      return tls_error(peer,
                       "the TLS handshake did not finish in time (the server accepted the "
                       "connection but did not complete the handshake)");
    }
    const long verified = SSL_get_verify_result(session->ssl.get());
    std::string why =
        verified != X509_V_OK ? verify_failure(verified, host) : handshake_failure(ssl_error);
    ERR_clear_error();
    return tls_error(peer, why);
  }
}

TlsConnection::TlsConnection(std::unique_ptr<Session> session) : m_session(std::move(session)) {}
TlsConnection::TlsConnection(TlsConnection&& other) noexcept = default;
TlsConnection& TlsConnection::operator=(TlsConnection&& other) noexcept = default;
TlsConnection::~TlsConnection() = default;

const std::string& TlsConnection::peer() const {
  return m_session->tcp.peer();
}

Status TlsConnection::send_all(std::string_view bytes, Deadline deadline) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ERR_clear_error();
    std::size_t written = 0;
    const int rc =
        SSL_write_ex(m_session->ssl.get(), bytes.data() + sent, bytes.size() - sent, &written);
    if (rc == 1) {
      sent += written;
      continue;
    }
    int ssl_error = 0;
    bool timed_out = false;
    if (m_session->wait_after(rc, deadline, ssl_error, timed_out)) {
      continue;
    }
    ERR_clear_error();
    return session_error(peer(),
                         timed_out ? "timed out sending" : "the TLS session broke while sending");
  }
  return {};
}

Expected<std::size_t> TlsConnection::receive_some(std::string& out, std::size_t max,
                                                  Deadline deadline) {
  const std::size_t before = out.size();
  out.resize(before + max);
  while (true) {
    ERR_clear_error();
    std::size_t got = 0;
    const int rc = SSL_read_ex(m_session->ssl.get(), out.data() + before, max, &got);
    if (rc == 1) {
      out.resize(before + got);
      return got;
    }
    int ssl_error = 0;
    bool timed_out = false;
    if (m_session->wait_after(rc, deadline, ssl_error, timed_out)) {
      continue;
    }
    out.resize(before);
    if (ssl_error == SSL_ERROR_ZERO_RETURN) {
      return std::size_t{0};
    }
    const int saved = errno;
    ERR_clear_error();
    if (timed_out) {
      return session_error(peer(), "no answer in time");
    }
    return session_error(peer(), ssl_error == SSL_ERROR_SYSCALL && saved == ECONNRESET
                                     ? std::string("the peer closed the connection (reset)")
                                     : std::string("the TLS session broke while receiving"));
  }
}

}  // namespace gb10tune::platform
