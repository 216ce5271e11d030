// The HTTP client over cpp-httplib: one connection per call, errors turned into plain words.
#include "gb10tune/platform/http_client.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>

#include <charconv>

namespace gb10tune::platform {

namespace {

Error usage_error(std::string_view text, const std::string& why) {
  return Error{fmt::format("bad server URL '{}': {}", text, why), ExitCode::usage};
}

std::string host_port(const Url& url) {
  return url.host.find(':') != std::string::npos ? fmt::format("[{}]:{}", url.host, url.port)
                                                 : fmt::format("{}:{}", url.host, url.port);
}

std::string duration_words(std::chrono::milliseconds timeout) {
  if (timeout.count() % 1000 == 0) {
    return fmt::format("{} s", timeout.count() / 1000);
  }
  return fmt::format("{} ms", timeout.count());
}

bool resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found != nullptr) {
    ::freeaddrinfo(found);
  }
  return rc == 0;
}

// Plain words for a call that got no answer.
std::string failure_cause(const Url& url, httplib::Error error, std::chrono::milliseconds timeout,
                          std::chrono::steady_clock::duration elapsed) {
  // A read error close to the deadline is the server not answering in time.
  const bool near_deadline = elapsed * 10 >= timeout * 9;
  switch (error) {
    case httplib::Error::Connection:
      if (!resolves(url.host)) {
        return fmt::format("cannot resolve the host name '{}'; check the URL", url.host);
      }
      if (near_deadline) {
        return fmt::format("timed out after {} while connecting to {}", duration_words(timeout),
                           host_port(url));
      }
      return fmt::format(
          "connection refused: nothing listens on {}; is llama-server running, on this host "
          "and port?",
          host_port(url));
    case httplib::Error::ConnectionTimeout:
      return fmt::format("timed out after {} while connecting to {}", duration_words(timeout),
                         host_port(url));
    case httplib::Error::Read:
      if (near_deadline) {
        return fmt::format(
            "timed out after {}: the server accepted the connection but did not answer (busy, "
            "stuck, or not llama-server?)",
            duration_words(timeout));
      }
      return "the server closed the connection without answering";
    case httplib::Error::Write:
      return "the connection broke while sending the request";
    default:
      return fmt::format("the request failed ({})", httplib::to_string(error));
  }
}

Expected<HttpResponse> request(const Url& url, std::string_view path, const std::string* body,
                               std::chrono::milliseconds timeout) {
  httplib::Client client(url.host, url.port);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  client.set_keep_alive(false);
  const std::string full_path = url.base_path + std::string(path);
  const auto started = std::chrono::steady_clock::now();
  httplib::Result result = body == nullptr
                               ? client.Get(full_path.c_str())
                               : client.Post(full_path.c_str(), *body, "application/json");
  if (!result) {
    const auto elapsed = std::chrono::steady_clock::now() - started;
    return Error{fmt::format("no answer from {}{}: {}", url.to_string(), path,
                             failure_cause(url, result.error(), timeout, elapsed)),
                 ExitCode::failed};
  }
  HttpResponse response;
  response.status = result->status;
  response.body = std::move(result->body);
  response.content_type = result->get_header_value("Content-Type");
  return response;
}

}  // namespace

std::string Url::to_string() const {
  return fmt::format("{}://{}{}", scheme, host_port(*this), base_path);
}

Expected<Url> parse_url(std::string_view text) {
  std::string_view rest = text;
  const auto scheme_end = rest.find("://");
  if (scheme_end != std::string_view::npos) {
    const std::string_view scheme = rest.substr(0, scheme_end);
    if (scheme == "https") {
      return usage_error(text,
                         "https is not supported; llama-server on this machine speaks plain "
                         "http, use http://HOST:PORT");
    }
    if (scheme != "http") {
      return usage_error(text, fmt::format("unknown scheme '{}'; use http://HOST:PORT", scheme));
    }
    rest.remove_prefix(scheme_end + 3);
  }
  Url url;
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view base = rest.substr(slash);
    while (!base.empty() && base.back() == '/') {
      base.remove_suffix(1);
    }
    url.base_path = std::string(base);
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return usage_error(text, "an IPv6 address needs a closing ']'");
    }
    url.host = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return usage_error(text, "expected ':PORT' after the IPv6 address");
      }
      port_text = after.substr(1);
      if (port_text.empty()) {
        return usage_error(text, "the port is empty");
      }
    }
  } else {
    const auto colon = authority.find(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) {
        return usage_error(text, "the port is empty");
      }
    }
  }
  if (url.host.empty()) {
    return usage_error(text, "the host is missing; use http://HOST:PORT");
  }
  if (!port_text.empty()) {
    int port = 0;
    const auto* end = port_text.data() + port_text.size();
    const auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
    if (ec != std::errc() || ptr != end || port < 1 || port > 65535) {
      return usage_error(text, fmt::format("'{}' is not a port (1-65535)", port_text));
    }
    url.port = port;
  }
  return url;
}

Expected<HttpResponse> http_get(const Url& url, std::string_view path,
                                std::chrono::milliseconds timeout) {
  return request(url, path, nullptr, timeout);
}

Expected<HttpResponse> http_post_json(const Url& url, std::string_view path,
                                      const std::string& body, std::chrono::milliseconds timeout) {
  return request(url, path, &body, timeout);
}

}  // namespace gb10tune::platform
