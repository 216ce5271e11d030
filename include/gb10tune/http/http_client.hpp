// A tiny blocking HTTP/1.1 client for talking to llama-server over a platform TcpConnection: one
// connection per call, plain http only, every call bounded as a whole (connect, request and answer
// within one deadline) and in size (headers and body within one cap).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "gb10tune/http/response_reader.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::http {

// Where a server listens: http://host:port[/base_path].
struct Url {
  std::string scheme = "http";  // always "http"
  std::string host;             // a name or an address; IPv6 without brackets ("::1")
  int port = 80;
  std::string base_path;  // "" or "/prefix" (no trailing slash); prepended to every path
  // "http://host:port/base" (IPv6 hosts in brackets).
  std::string to_string() const;
};

// Parses "http://host[:port][/base]" ("host:port" alone is taken as http). An Error (exit
// code usage) for https (not supported), other schemes, an empty host, a bad port or junk.
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

// POST `body` as application/json to base_path + path; bounded and failing like http_get.
Expected<HttpResponse> http_post_json(const Url& url, std::string_view path,
                                      const std::string& body, std::chrono::milliseconds timeout,
                                      std::size_t max_bytes = kMaxAnswerBytes);

}  // namespace gb10tune::http
