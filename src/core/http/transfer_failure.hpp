// Internal to the HTTP client: a failed libcurl transfer put into words that name what failed,
// where, and what to do. http_client.cpp performs the transfers.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <string>

#include "gb10tune/http/http_client.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::http::detail {

// Frees a curl URL handle (std::unique_ptr<CURLU, UrlDeleter>).
struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};

// The proxy a request goes through (from the environment, as curl reads it), or none.
struct ProxyChoice {
  std::string variable;  // the variable it came from, for messages; "" for none
  std::string proxy;     // "" for none
  std::string no_proxy;
};

// "16 MiB", "64 KiB", "1000 bytes": a cap as callers set it.
std::string cap_words(std::uint64_t bytes);

// The error of a transfer of `request` on `curl` that ended with `rc`: `detail` is curl's own
// words, `received` the bytes that had arrived.
Error describe_failure(const HttpRequest& request, CURL* curl, const ProxyChoice& proxy,
                       std::string detail, std::uint64_t received, CURLcode rc);

}  // namespace gb10tune::http::detail
