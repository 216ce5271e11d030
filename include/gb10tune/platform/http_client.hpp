// A tiny blocking HTTP/1.1 client for talking to llama-server: the only code in gb10tune that
// opens sockets. One connection per call, plain http only.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

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

// What the server answered. Any status counts as an answer; callers judge it.
struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
};

// GET base_path + path. An Error (ExitCode::failed) naming the URL when there is no answer:
// connection refused, host unknown, timed out (the whole call is bounded by `timeout`),
// connection closed early.
Expected<HttpResponse> http_get(const Url& url, std::string_view path,
                                std::chrono::milliseconds timeout);

// POST `body` as application/json to base_path + path; fails like http_get.
Expected<HttpResponse> http_post_json(const Url& url, std::string_view path,
                                      const std::string& body, std::chrono::milliseconds timeout);

}  // namespace gb10tune::platform
