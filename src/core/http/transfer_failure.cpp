#include "transfer_failure.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::http::detail {

namespace {

// The certificate checks' results that get words of their own (OpenSSL's X509_V_ERR_* numbers,
// which curl reports as CURLINFO_SSL_VERIFYRESULT; they are part of OpenSSL's stable ABI).
constexpr long kCertNotYetValid = 9;
constexpr long kCertHasExpired = 10;
constexpr long kHostnameMismatch = 62;
constexpr long kIpAddressMismatch = 64;

// "host:port" of `url` for messages (IPv6 in brackets); "" when curl cannot parse it.
std::string authority_of(const std::string& url) {
  std::unique_ptr<CURLU, UrlDeleter> parsed(curl_url());
  char* host = nullptr;
  char* port = nullptr;
  std::string authority;
  if (parsed && curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) == CURLUE_OK &&
      curl_url_get(parsed.get(), CURLUPART_HOST, &host, 0) == CURLUE_OK &&
      curl_url_get(parsed.get(), CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
    authority = fmt::format("{}:{}", host, port);
  }
  curl_free(host);
  curl_free(port);
  return authority;
}

std::string host_of(const std::string& authority) {
  std::string host = authority.substr(0, authority.rfind(':'));
  if (host.size() >= 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

// A failed transfer in words: what failed, where, and what to do.
class Failure {
 public:
  Failure(const HttpRequest& request, CURL* curl, const ProxyChoice& proxy, std::string detail,
          std::uint64_t received)
      : m_request(request),
        m_curl(curl),
        m_proxy(proxy),
        m_detail(std::move(detail)),
        m_received(received),
        m_authority(authority_of(request.url)) {}

  Error describe(CURLcode rc) const {
    long connect_code = 0;
    curl_easy_getinfo(m_curl, CURLINFO_HTTP_CONNECTCODE, &connect_code);
    if (connect_code != 0 && connect_code / 100 != 2) {
      return no_answer(fmt::format(
          "the proxy {} (from {}) refused the tunnel to {}: HTTP {}; check {}, or list the host "
          "in no_proxy to go direct",
          m_proxy.proxy, m_proxy.variable, m_authority, connect_code, m_proxy.variable));
    }
    switch (rc) {
      case CURLE_OPERATION_TIMEDOUT:
        return past_deadline();
      case CURLE_COULDNT_RESOLVE_HOST:
        return no_answer(fmt::format("cannot resolve the host name '{}' ({}); check the address",
                                     host_of(m_authority), m_detail));
      case CURLE_COULDNT_RESOLVE_PROXY:
        return no_answer(fmt::format("cannot resolve the name of the proxy {} (from {}); check {}",
                                     m_proxy.proxy, m_proxy.variable, m_proxy.variable));
      case CURLE_COULDNT_CONNECT:
        return no_answer(connect_failure());
      case CURLE_GOT_NOTHING:
        return no_answer("the server closed the connection without answering");
      case CURLE_SEND_ERROR:
        return no_answer(
            fmt::format("the connection broke while sending the request ({})", m_detail));
      case CURLE_RECV_ERROR:
        if (starts_with(m_detail, "Too large response headers")) {
          // curl's own bound on headers (300 KB since 8.3, and in patched older builds).
          return answer_error(fmt::format("has headers too large ({})", m_detail), m_request.hint);
        }
        return no_answer(fmt::format(
            "the server closed the connection, or it broke, before the answer was complete ({})",
            m_detail));
      case CURLE_PARTIAL_FILE:
        return answer_error(fmt::format("ended early: the connection closed after {} bytes ({})",
                                        m_received, m_detail),
                            "");
      case CURLE_WEIRD_SERVER_REPLY:
      case CURLE_UNSUPPORTED_PROTOCOL:
      case CURLE_HTTP2:
      case CURLE_HTTP2_STREAM:
      case CURLE_BAD_CONTENT_ENCODING:
        return answer_error(fmt::format("is not HTTP ({})", m_detail), m_request.hint);
      case CURLE_PEER_FAILED_VERIFICATION:
        return no_answer(untrusted());
      case CURLE_SSL_CACERT_BADFILE:
        return no_answer(fmt::format(
            "the CA store cannot be read ({}); check SSL_CERT_FILE and SSL_CERT_DIR, or the "
            "system's certificates (ca-certificates)",
            m_detail));
      case CURLE_SSL_CONNECT_ERROR:
        return no_answer(fmt::format(
            "{}: the TLS handshake failed: the server did not speak TLS, or only versions older "
            "than TLS 1.2 ({}); for a server that speaks plain HTTP give an http:// URL",
            m_authority, m_detail));
      case CURLE_URL_MALFORMAT:
        return Error{fmt::format("bad URL '{}': {}", m_request.url, m_detail), ExitCode::usage};
      default:
        return no_answer(fmt::format("{} ({})", curl_easy_strerror(rc), m_detail));
    }
  }

 private:
  Error no_answer(const std::string& why) const {
    return Error{fmt::format("no answer from {}: {}", m_request.url, why), ExitCode::failed};
  }

  Error answer_error(const std::string& why, const std::string& hint) const {
    return Error{fmt::format("the answer from {} {}{}", m_request.url, why, hint),
                 ExitCode::failed};
  }

  curl_off_t time_of(CURLINFO info) const {
    curl_off_t value = 0;
    curl_easy_getinfo(m_curl, info, &value);
    return value;
  }

  // The call reached its deadline: how far it got.
  Error past_deadline() const {
    std::string where;
    const bool proxied = !m_proxy.proxy.empty();
    if (time_of(CURLINFO_NAMELOOKUP_TIME_T) == 0) {
      where = proxied ? fmt::format("the name of the proxy {} (from {}) was not resolved in time",
                                    m_proxy.proxy, m_proxy.variable)
                      : fmt::format(
                            "could not resolve the host name '{}' within {} (is a DNS server "
                            "reachable? an address instead of the name needs none)",
                            host_of(m_authority), format_duration(m_request.timeout));
    } else if (starts_with(ascii_lower(m_request.url), "https://") &&
               time_of(CURLINFO_APPCONNECT_TIME_T) == 0) {
      // libcurl before 8 times the connect only once TLS is up too: which one stalled is not
      // known then.
      const bool tcp_up = time_of(CURLINFO_CONNECT_TIME_T) != 0;
      where = fmt::format(
          "{}: {}the TLS handshake did not finish in time (is it a TLS server? a proxy that "
          "stalls?)",
          proxied ? "through the proxy " + m_proxy.proxy : m_authority,
          tcp_up ? "" : "the TCP connection or ");
    } else if (time_of(CURLINFO_CONNECT_TIME_T) == 0) {
      where = proxied ? fmt::format("timed out connecting to the proxy {} (from {})", m_proxy.proxy,
                                    m_proxy.variable)
                      : fmt::format("timed out connecting to {}", m_authority);
    } else if (m_received == 0) {
      where =
          "the server accepted the connection but sent nothing (busy, stuck, or not "
          "llama-server?)";
    } else {
      where = fmt::format(
          "the server had sent {} bytes and was still sending (stalled, or dripping its "
          "answer?)",
          m_received);
    }
    return Error{fmt::format("no complete answer from {} within {}: {}", m_request.url,
                             format_duration(m_request.timeout), where),
                 ExitCode::failed};
  }

  std::string connect_failure() const {
    long os_errno = 0;
    curl_easy_getinfo(m_curl, CURLINFO_OS_ERRNO, &os_errno);
    const std::string why =
        os_errno != 0 ? std::string(std::strerror(static_cast<int>(os_errno))) : m_detail;
    if (!m_proxy.proxy.empty()) {
      return fmt::format("cannot connect to the proxy {} (from {}): {}; check {}", m_proxy.proxy,
                         m_proxy.variable, why, m_proxy.variable);
    }
    if (os_errno == ECONNREFUSED) {
      return fmt::format("connection refused: nothing listens on {}", m_authority);
    }
    return fmt::format("cannot connect to {}: {}", m_authority, why);
  }

  std::string untrusted() const {
    long result = 0;
    curl_easy_getinfo(m_curl, CURLINFO_SSL_VERIFYRESULT, &result);
    if (result == kCertHasExpired) {
      return fmt::format(
          "{}: the server's certificate has expired; check this machine's clock (date), then "
          "the server's certificate",
          m_authority);
    }
    if (result == kCertNotYetValid) {
      return fmt::format(
          "{}: the server's certificate is not valid yet; check this machine's clock (date)",
          m_authority);
    }
    // The chain is trusted but names another host: OpenSSL's check of the name failed, or
    // curl's own (which reports no verify error, only its words).
    if (result == 0 || result == kHostnameMismatch || result == kIpAddressMismatch ||
        m_detail.find("subject name") != std::string::npos) {
      return fmt::format(
          "{}: name mismatch: the server's certificate is for another name, not '{}' ({}); use "
          "the name the certificate was issued for",
          m_authority, host_of(m_authority), m_detail);
    }
    return fmt::format(
        "{}: the server's certificate is not trusted ({}); if the server uses a private CA, "
        "point SSL_CERT_FILE at that CA's certificate",
        m_authority, m_detail);
  }

  const HttpRequest& m_request;
  CURL* m_curl;
  const ProxyChoice& m_proxy;
  std::string m_detail;  // curl's own words
  std::uint64_t m_received;
  std::string m_authority;
};

}  // namespace

std::string cap_words(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  if (bytes >= 1024 && bytes % 1024 == 0) {
    return fmt::format("{} KiB", bytes >> 10);
  }
  return fmt::format("{} bytes", bytes);
}

Error describe_failure(const HttpRequest& request, CURL* curl, const ProxyChoice& proxy,
                       std::string detail, std::uint64_t received, CURLcode rc) {
  return Failure(request, curl, proxy, std::move(detail), received).describe(rc);
}

}  // namespace gb10tune::http::detail
