// The HTTP(S) client: one thin wrapper over libcurl for llama-server's API, webhooks and range
// reads of remote model headers. Every call is one transfer bounded as a whole in time (name
// lookup, connect, TLS handshake, request and answer within one deadline) and in size (headers
// and body within one cap). https is always verified against the system CA store (SSL_CERT_FILE
// / SSL_CERT_DIR point it elsewhere), TLS 1.2 at least, HTTP/2 where the server offers it.
// Redirects are never followed here: a caller that wants them (remote_file.hpp) follows them
// itself, one bounded call a hop.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::http {

// Where a server listens: http[s]://host:port[/base_path].
struct Url {
  std::string scheme = "http";  // "http" or "https"
  std::string host;             // a name or an address; IPv6 without brackets ("::1")
  int port = 80;                // 443 by default for https
  std::string base_path;        // "" or "/prefix" (no trailing slash); prepended to every path
  // "http://host:port/base" (IPv6 hosts in brackets).
  std::string to_string() const;
};

// Parses "http[s]://host[:port][/base]" ("host:port" alone is taken as http). An Error (exit
// code usage) for other schemes, an empty host, a bad port or junk.
Expected<Url> parse_url(std::string_view text);

// The most an answer may hold unless a call says otherwise: far more than llama-server sends
// (a /slots of many slots, a long completion), yet bounded.
inline constexpr std::size_t kMaxAnswerBytes = std::size_t{16} << 20;
// The cap for answers of a line or two (/health).
inline constexpr std::size_t kSmallAnswerBytes = std::size_t{64} << 10;

// What the server answered. Any status counts as an answer; callers judge it.
struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
};

// The headers of the final answer as received, the names in lower case, in order.
struct HttpHeaders {
  std::vector<std::pair<std::string, std::string>> items;

  // The value of the first header called `name` (lower case), or "" when there is none.
  std::string get(std::string_view name) const;
};

// Looks at an answer's status and headers before its body is read: an Error ends the call at
// once with that Error (the rest of the answer is never read).
using HeadCheck = std::function<Status(const HttpResponse&, const HttpHeaders&)>;

// An answer with its headers.
struct HttpReply {
  HttpResponse response;
  HttpHeaders headers;
  // Where a redirect (3xx with a Location) leads, as an absolute URL; "" for other answers.
  std::string redirect_url;
};

// One call. Fields are assigned one by one (no designated initialisers).
struct HttpRequest {
  std::string url;                  // absolute: http[s]://HOST[:PORT]/PATH[?QUERY]
  std::optional<std::string> body;  // set: POST it as application/json; else GET
  std::string range;                // "FIRST-LAST": a range GET (Range: bytes=FIRST-LAST)
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};  // the whole call
  std::size_t max_bytes = kMaxAnswerBytes;                      // headers and body together
  // The environment whose proxies the call goes through, as curl reads them: http_proxy for
  // http (lower case only), https_proxy / HTTPS_PROXY for https, all_proxy / ALL_PROXY for
  // both, user:password@ in a proxy's URL for its authentication, no_proxy / NO_PROXY for the
  // hosts and domains that go direct (* all). nullopt: straight to the server, whatever the
  // environment says (llama-server on this machine or the LAN).
  std::optional<platform::Environment> proxies;
  // Appended to the message of an answer that is not HTTP or too large.
  std::string hint;
  // Sees the final answer's status and headers first (also when the body it announces exceeds
  // max_bytes); may be empty.
  HeadCheck check;
};

// Makes `request`. An Error (ExitCode::failed) naming the URL when there is no complete answer,
// with the reason and its fix: the name cannot be resolved (or not in time), the connection is
// refused or closed early, the proxy refuses, TLS fails (a certificate that is not trusted,
// expired or not yet valid, or for another name; a server that does not speak TLS), nothing
// complete arrives before the timeout (however slowly the server sends), the answer exceeds
// max_bytes, or it is not HTTP; or the Error of request.check.
Expected<HttpReply> http_request(const HttpRequest& request);

// GET base_path + path, straight to the server; bounded and failing like http_request.
Expected<HttpResponse> http_get(const Url& url, std::string_view path,
                                std::chrono::milliseconds timeout,
                                std::size_t max_bytes = kMaxAnswerBytes);

// POST `body` as application/json to base_path + path, straight to the server; bounded and
// failing like http_request.
Expected<HttpResponse> http_post_json(const Url& url, std::string_view path,
                                      const std::string& body, std::chrono::milliseconds timeout,
                                      std::size_t max_bytes = kMaxAnswerBytes);

}  // namespace gb10tune::http
