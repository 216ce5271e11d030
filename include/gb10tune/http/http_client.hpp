// A tiny blocking HTTP/1.1 client for talking to llama-server over a platform TcpConnection (or a
// TLS session over one, for https): one connection per call, every call bounded as a whole
// (connect, handshake, request and answer within one deadline) and in size (headers and body
// within one cap).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "gb10tune/http/http_stream.hpp"
#include "gb10tune/http/response_reader.hpp"
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

// GET base_path + path. An Error (ExitCode::failed) naming the URL when there is no complete
// answer: the name cannot be resolved, the connection is refused or closed early, nothing
// complete arrives before `timeout` has passed since the call began (the whole call, however
// slowly the server sends), the answer (headers and body together) exceeds `max_bytes`, or
// it is not HTTP.
Expected<HttpResponse> http_get(const Url& url, std::string_view path,
                                std::chrono::milliseconds timeout,
                                std::size_t max_bytes = kMaxAnswerBytes);

// One request as it goes on the wire, for callers that build their own (range requests,
// requests through a proxy).
struct RawRequest {
  Route route;         // where to connect, and whether over TLS
  std::string text;    // the whole request: request line, headers, blank line, body
  std::string target;  // the URL it asks for, as messages name it
  std::string hint;    // appended to the message of an answer that is not HTTP or too large
};

// Looks at an answer's status and headers before its body is read: an Error ends the call at
// once with that Error (the rest of the answer is never read).
using HeadCheck = std::function<Status(const HttpResponse&, const HttpHeaders&)>;

// An answer with its headers.
struct HttpReply {
  HttpResponse response;
  HttpHeaders headers;
};

// Sends `request` and reads the answer, bounded and failing like http_get; `check`, when set,
// sees the final answer's status and headers first (also when the body it announces exceeds
// `max_bytes`).
Expected<HttpReply> http_exchange(const RawRequest& request, std::chrono::milliseconds timeout,
                                  std::size_t max_bytes, const HeadCheck& check = {});

// POST `body` as application/json to base_path + path; bounded and failing like http_get.
Expected<HttpResponse> http_post_json(const Url& url, std::string_view path,
                                      const std::string& body, std::chrono::milliseconds timeout,
                                      std::size_t max_bytes = kMaxAnswerBytes);

}  // namespace gb10tune::http
