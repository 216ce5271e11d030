// The HTTP client over libcurl: one easy handle a call, one deadline for the whole transfer
// (CURLOPT_TIMEOUT_MS, name lookup included), one size cap for headers and body (counted in the
// callbacks, which end the transfer past it), the proxies of an environment or none, and curl's
// error codes put into words that name the URL and the fix.
#include "gb10tune/http/http_client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::http {

namespace {

// The certificate checks' results that get words of their own (OpenSSL's X509_V_ERR_* numbers,
// which curl reports as CURLINFO_SSL_VERIFYRESULT; they are part of OpenSSL's stable ABI).
constexpr long kCertNotYetValid = 9;
constexpr long kCertHasExpired = 10;
constexpr long kHostnameMismatch = 62;
constexpr long kIpAddressMismatch = 64;

constexpr std::string_view kLlamaServerHint =
    "; llama-server does not answer like this: is it llama-server that listens there?";

Error usage_error(std::string_view text, const std::string& why) {
  return Error{fmt::format("bad server URL '{}': {}", text, why), ExitCode::usage};
}

// "16 MiB", "64 KiB", "1000 bytes": a cap as callers set it.
std::string cap_words(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  if (bytes >= 1024 && bytes % 1024 == 0) {
    return fmt::format("{} KiB", bytes >> 10);
  }
  return fmt::format("{} bytes", bytes);
}

// curl_global_init once, before the first handle (thread-safe since curl 7.84).
Status global_init() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    return Error{fmt::format("libcurl cannot start: {}", curl_easy_strerror(rc)), ExitCode::failed};
  }
  return {};
}

struct EasyDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};

// The proxy a request to a `scheme` URL goes through, from `env` as curl reads it.
struct ProxyChoice {
  std::string variable;  // the variable it came from, for messages; "" for none
  std::string proxy;     // "" for none
  std::string no_proxy;
};

ProxyChoice choose_proxy(const std::string& scheme, const platform::Environment& env) {
  ProxyChoice choice;
  // http_proxy only in lower case (HTTP_PROXY can be set by a web request's headers in CGI
  // programs), the others in either case, the lower-case one first.
  std::vector<std::string> names;
  if (scheme == "https") {
    names = {"https_proxy", "HTTPS_PROXY"};
  } else {
    names = {"http_proxy"};
  }
  names.insert(names.end(), {"all_proxy", "ALL_PROXY"});
  for (const auto& name : names) {
    if (auto value = env.get(name)) {
      choice.variable = name;
      choice.proxy = std::move(*value);
      break;
    }
  }
  choice.no_proxy = env.get("no_proxy").value_or(env.get("NO_PROXY").value_or(""));
  return choice;
}

// What a transfer gathers in curl's callbacks.
struct Transfer {
  CURL* curl = nullptr;
  const HttpRequest* request = nullptr;
  std::uint64_t received = 0;  // header and body bytes
  HttpReply reply;
  std::optional<Error> stop;  // why a callback ended the transfer

  Error too_large(std::string_view what) const {
    return Error{fmt::format("the answer from {} exceeded {} ({}){}", request->url,
                             cap_words(request->max_bytes), what, request->hint),
                 ExitCode::failed};
  }

  // Counts `bytes` more; false (and `stop` set) past the cap.
  bool count(std::size_t bytes) {
    received += bytes;
    if (received > request->max_bytes) {
      stop = too_large("headers and body together");
      return false;
    }
    return true;
  }

  // The end of an answer's headers: the final answer's status and headers are taken and checked.
  bool end_of_head() {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200) {
      return true;  // an interim answer (100 Continue): the final one follows
    }
    reply.response.status = static_cast<int>(status);
    const char* type = nullptr;
    if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type != nullptr) {
      reply.response.content_type = type;
    }
    reply.headers.items.clear();
    for (curl_header* header = curl_easy_nextheader(curl, CURLH_HEADER, -1, nullptr);
         header != nullptr; header = curl_easy_nextheader(curl, CURLH_HEADER, -1, header)) {
      reply.headers.items.emplace_back(ascii_lower(header->name), header->value);
    }
    if (request->check) {
      if (Status wanted = request->check(reply.response, reply.headers); !wanted) {
        stop = wanted.error();
        return false;
      }
    }
    curl_off_t length = -1;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (length > 0 && static_cast<std::uint64_t>(length) > request->max_bytes - received) {
      stop = too_large(fmt::format("it announced a body of {} bytes", length));
      return false;
    }
    return true;
  }
};

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (!transfer.count(bytes)) {
    return 0;
  }
  const std::string_view line(data, bytes);
  if ((line == "\r\n" || line == "\n") && !transfer.end_of_head()) {
    return 0;
  }
  return bytes;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (!transfer.count(bytes)) {
    return 0;
  }
  transfer.reply.response.body.append(data, bytes);
  return bytes;
}

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

std::string HttpHeaders::get(std::string_view name) const {
  for (const auto& [key, value] : items) {
    if (key == name) {
      return value;
    }
  }
  return {};
}

std::string Url::to_string() const {
  return fmt::format("{}://{}{}", scheme, format_host_port(host, port), base_path);
}

Expected<Url> parse_url(std::string_view text) {
  std::string_view rest = text;
  const auto scheme_end = rest.find("://");
  if (scheme_end != std::string_view::npos) {
    const std::string_view scheme = rest.substr(0, scheme_end);
    if (scheme != "http" && scheme != "https") {
      return usage_error(text, fmt::format("unknown scheme '{}'; use http://HOST:PORT", scheme));
    }
    rest.remove_prefix(scheme_end + 3);
  }
  Url url;
  if (scheme_end != std::string_view::npos && text.substr(0, scheme_end) == "https") {
    url.scheme = "https";
    url.port = 443;
  }
  const auto slash = rest.find('/');
  if (slash != std::string_view::npos) {
    std::string_view base = rest.substr(slash);
    while (!base.empty() && base.back() == '/') {
      base.remove_suffix(1);
    }
    url.base_path = std::string(base);
  }
  const auto authority = parse_host_port(rest.substr(0, slash), url.port);
  if (!authority) {
    return usage_error(text, authority.error().message + "; use http://HOST:PORT");
  }
  url.host = authority->host;
  url.port = authority->port;
  return url;
}

namespace {

// One transfer on a handle of its own, cleaned up before it returns.
Expected<HttpReply> perform(const HttpRequest& request) {
  if (Status started = global_init(); !started) {
    return started.error();
  }
  // What the handle points to is declared first, so that it outlives the handle's cleanup.
  char detail[CURL_ERROR_SIZE] = {};
  Transfer transfer;
  std::unique_ptr<curl_slist, ListDeleter> headers;
  std::unique_ptr<CURL, EasyDeleter> handle(curl_easy_init());
  if (!handle) {
    return Error{"libcurl cannot make a handle (out of memory?)", ExitCode::failed};
  }
  CURL* curl = handle.get();
  transfer.curl = curl;
  transfer.request = &request;
  const std::string user_agent = fmt::format("{}/{}", kToolName, kToolVersion);
  const long timeout_ms = std::max<long>(1, static_cast<long>(request.timeout.count()));

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(curl, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
#if LIBCURL_VERSION_NUM >= 0x075700
  // A lookup still hanging at the deadline is left to end on its own thread, not waited for.
  curl_easy_setopt(curl, CURLOPT_QUICK_EXIT, 1L);
#endif
  // The system CA store, unless SSL_CERT_FILE / SSL_CERT_DIR name another (as OpenSSL's tools
  // read them; libcurl itself does not).
  const platform::Environment process_env = platform::Environment::current();
  const std::string ca_file = process_env.get("SSL_CERT_FILE").value_or("");
  const std::string ca_dir = process_env.get("SSL_CERT_DIR").value_or("");
  if (!ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
  }
  if (!ca_dir.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAPATH, ca_dir.c_str());
  }

  ProxyChoice proxy;
  if (request.proxies) {
    const std::string scheme = ascii_lower(request.url.substr(0, request.url.find("://")));
    proxy = choose_proxy(scheme, *request.proxies);
  }
  // An empty proxy turns off curl's own reading of the environment: direct. A proxy's
  // user:password@ is sent with Basic authentication, as curl's command line does.
  curl_easy_setopt(curl, CURLOPT_PROXY, proxy.proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_NOPROXY, proxy.no_proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);

  const auto add_header = [&headers](const char* line) {
    headers.reset(curl_slist_append(headers.release(), line));
  };
  if (request.body) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body->size()));
    add_header("Content-Type: application/json");
    add_header("Expect:");  // no wait for "100 Continue" before a large body
  }
  if (!request.range.empty()) {
    curl_easy_setopt(curl, CURLOPT_RANGE, request.range.c_str());
  }
  if (headers) {
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);

  const CURLcode rc = curl_easy_perform(curl);
  if (transfer.stop) {
    return *transfer.stop;
  }
  if (rc != CURLE_OK) {
    return Failure(request, curl, proxy, detail[0] != '\0' ? detail : curl_easy_strerror(rc),
                   transfer.received)
        .describe(rc);
  }
  if (transfer.reply.response.status == 0) {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    transfer.reply.response.status = static_cast<int>(status);
  }
  const char* redirect = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &redirect) == CURLE_OK &&
      redirect != nullptr) {
    transfer.reply.redirect_url = redirect;
  }
  return std::move(transfer.reply);
}

}  // namespace

Expected<HttpReply> http_request(const HttpRequest& request) {
  // libcurl does not ignore SIGPIPE itself with CURLOPT_NOSIGNAL: a TLS alert written to a
  // server that has hung up would end the process.
  std::optional<Expected<HttpReply>> reply;
  platform::without_sigpipe([&] { reply.emplace(perform(request)); });
  return std::move(*reply);
}

namespace {

HttpRequest server_request(const Url& url, std::string_view path, std::chrono::milliseconds timeout,
                           std::size_t max_bytes) {
  HttpRequest request;
  request.url = url.to_string() + std::string(path);
  request.timeout = timeout;
  request.max_bytes = max_bytes;
  request.hint = std::string(kLlamaServerHint);
  return request;
}

}  // namespace

Expected<HttpResponse> http_get(const Url& url, std::string_view path,
                                std::chrono::milliseconds timeout, std::size_t max_bytes) {
  auto reply = http_request(server_request(url, path, timeout, max_bytes));
  if (!reply) {
    return reply.error();
  }
  return std::move(reply->response);
}

Expected<HttpResponse> http_post_json(const Url& url, std::string_view path,
                                      const std::string& body, std::chrono::milliseconds timeout,
                                      std::size_t max_bytes) {
  HttpRequest request = server_request(url, path, timeout, max_bytes);
  request.body = body;
  auto reply = http_request(request);
  if (!reply) {
    return reply.error();
  }
  return std::move(reply->response);
}

}  // namespace gb10tune::http
