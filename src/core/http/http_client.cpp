// The HTTP client over an HttpStream (TCP or TLS): one deadline for the whole call and one size cap
// for the whole answer, so that a server that drips, floods or never finishes costs at most both.
#include "gb10tune/http/http_client.hpp"

#include <fmt/format.h>

#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::http {

namespace {

using Clock = std::chrono::steady_clock;

// Bytes asked of the socket per read.
constexpr std::size_t kReadPiece = 64 * 1024;

Error usage_error(std::string_view text, const std::string& why) {
  return Error{fmt::format("bad server URL '{}': {}", text, why), ExitCode::usage};
}

// The request, with the Host header of url and "Connection: close" (one call, one connection).
std::string request_text(const Url& url, std::string_view path, const std::string* body) {
  std::string text = fmt::format(
      "{} {}{} HTTP/1.1\r\nHost: {}\r\nUser-Agent: {}/{}\r\nAccept: */*\r\n"
      "Connection: close\r\n",
      body == nullptr ? "GET" : "POST", url.base_path, path, format_host_port(url.host, url.port),
      kToolName, kToolVersion);
  if (body != nullptr) {
    text +=
        fmt::format("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n", body->size());
    text += *body;
  } else {
    text += "\r\n";
  }
  return text;
}

// The error of a call that reached its deadline, saying how far it got.
Error past_deadline(const std::string& target, std::chrono::milliseconds timeout,
                    std::string_view where) {
  return Error{fmt::format("no complete answer from {} within {}: {}", target,
                           format_duration(timeout), where),
               ExitCode::failed};
}

constexpr std::string_view kLlamaServerHint =
    "; llama-server does not answer like this: is it llama-server that listens there?";

class Call {
 public:
  Call(const RawRequest& request, std::chrono::milliseconds timeout, std::size_t max_bytes)
      : m_target(request.target),
        m_hint(request.hint),
        m_timeout(timeout),
        m_deadline(Clock::now() + timeout),
        m_reader(max_bytes) {}

  Expected<HttpReply> run(const RawRequest& request, const HeadCheck& check) {
    auto connection = HttpStream::open(request.route, m_deadline);
    if (!connection) {
      return late() ? past_deadline(m_target, m_timeout, connection.error().message)
                    : no_answer(connection.error().message);
    }
    if (auto sent = connection->send_all(request.text, m_deadline); !sent) {
      return late() ? past_deadline(m_target, m_timeout, "the server did not take the request")
                    : no_answer("the connection broke while sending the request");
    }
    std::string piece;
    while (!m_reader.complete()) {
      // A server that floods keeps every read ready: the deadline is checked between reads too.
      if (late()) {
        return past_deadline(m_target, m_timeout, progress());
      }
      piece.clear();
      auto got = connection->receive_some(piece, kReadPiece, m_deadline);
      if (!got) {
        return late() ? past_deadline(m_target, m_timeout, progress())
                      : no_answer(got.error().message);
      }
      if (*got == 0) {
        if (m_reader.received() == 0) {
          return no_answer("the server closed the connection without answering");
        }
        if (auto finished = m_reader.finish(); !finished) {
          return Error{fmt::format("the answer from {} {}", m_target, finished.error().message),
                       ExitCode::failed};
        }
        break;
      }
      const Status fed = m_reader.feed(piece);
      if (check && m_reader.head().status >= 200 && (m_reader.headers_read() || !fed)) {
        if (Status wanted = check(m_reader.head(), m_reader.headers()); !wanted) {
          return wanted.error();
        }
      }
      if (!fed) {
        return bad_answer(fed.error());
      }
    }
    HttpHeaders headers = m_reader.headers();
    return HttpReply{m_reader.take(), std::move(headers)};
  }

 private:
  bool late() const { return Clock::now() >= m_deadline; }

  std::string progress() const {
    if (m_reader.received() == 0) {
      return "the server accepted the connection but sent nothing (busy, stuck, or not "
             "llama-server?)";
    }
    return fmt::format(
        "the server had sent {} bytes and was still sending (stalled, or "
        "dripping its answer?)",
        m_reader.received());
  }

  Error no_answer(const std::string& why) const {
    return Error{fmt::format("no answer from {}: {}", m_target, why), ExitCode::failed};
  }

  // An answer too large or not HTTP.
  Error bad_answer(const Error& why) const {
    return Error{fmt::format("the answer from {} {}{}", m_target, why.message, m_hint),
                 ExitCode::failed};
  }

  std::string m_target;
  std::string m_hint;
  std::chrono::milliseconds m_timeout;
  Clock::time_point m_deadline;
  ResponseReader m_reader;
};

}  // namespace

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

Expected<HttpReply> http_exchange(const RawRequest& request, std::chrono::milliseconds timeout,
                                  std::size_t max_bytes, const HeadCheck& check) {
  return Call(request, timeout, max_bytes).run(request, check);
}

namespace {

RawRequest server_request(const Url& url, std::string_view path, const std::string* body) {
  Route route;
  route.connect_host = url.host;
  route.connect_port = url.port;
  if (url.scheme == "https") {
    route.tls_host = url.host;
    route.tls_port = url.port;
  }
  return {route, request_text(url, path, body), url.to_string() + std::string(path),
          std::string(kLlamaServerHint)};
}

}  // namespace

Expected<HttpResponse> http_get(const Url& url, std::string_view path,
                                std::chrono::milliseconds timeout, std::size_t max_bytes) {
  auto reply = http_exchange(server_request(url, path, nullptr), timeout, max_bytes);
  if (!reply) {
    return reply.error();
  }
  return std::move(reply->response);
}

Expected<HttpResponse> http_post_json(const Url& url, std::string_view path,
                                      const std::string& body, std::chrono::milliseconds timeout,
                                      std::size_t max_bytes) {
  auto reply = http_exchange(server_request(url, path, &body), timeout, max_bytes);
  if (!reply) {
    return reply.error();
  }
  return std::move(reply->response);
}

}  // namespace gb10tune::http
