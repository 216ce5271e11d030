// A file on a web server read with HTTP range requests, for reading a model's header before a
// download: the first request learns the file's size (Content-Range) and follows redirects,
// later ones fetch more of the file only as the reader needs it. Bounded in bytes (the header
// cap) and in time (per request and for the whole read); a server that ignores Range is an
// Error at once, before its body is read.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::http {

// The bounds of a remote read.
struct RemoteLimits {
  std::uint64_t first_bytes = std::uint64_t{2} << 20;  // the first request's range
  std::uint64_t max_bytes = gguf::kMaxHeaderBytes;     // what a read may fetch in all
  // A server that ignores Range (python3 -m http.server) sends the whole file: one announced
  // within this is read whole; a larger one is refused at once.
  std::uint64_t whole_file_bytes = std::uint64_t{16} << 20;
  std::chrono::milliseconds per_request{std::chrono::seconds(30)};
  std::chrono::steady_clock::time_point deadline;  // the whole read ends by then
  int max_redirects = 5;
};

// Where a read reports how far it got: the bytes fetched so far of this file and its size.
using RemoteProgress = std::function<void(std::uint64_t fetched, std::uint64_t size)>;

// What decides how a remote read connects: the proxies of the environment, as
// HttpRequest::proxies reads them (http_proxy; https_proxy / HTTPS_PROXY, reached over a CONNECT
// tunnel; no_proxy / NO_PROXY lists hosts or domain suffixes that go direct, * all). https is
// verified as http/http_client.hpp says.
struct RemoteOptions {
  RemoteLimits limits;
  platform::Environment env;
  RemoteProgress progress;  // may be empty
  // The header cache's directory (http/header_cache.hpp); nullopt: no cache is read or written.
  std::optional<std::filesystem::path> cache_dir;
};

// True when `text` names a remote file (http:// or https://).
bool is_remote_url(std::string_view text);

class RemoteFile final : public gguf::HeaderSource {
 public:
  // Fetches the first limits.first_bytes of `url`, or, when the cache holds an entry for it,
  // asks for one byte and uses the entry when the size and validator are the same. A usage Error
  // for a URL that is not http(s)://HOST[:PORT]/PATH; a failed Error naming the URL for a server
  // that cannot be reached, a TLS failure (untrusted, expired or mismatched certificate, no TLS
  // spoken), answers other than 206 (404, a 200 that ignores Range), too many redirects, a loop
  // or a redirect from https to http, a bad Content-Range, or a deadline passed.
  static Expected<RemoteFile> open(const std::string& url, const RemoteOptions& options);

  std::uint64_t size() const override { return m_size; }
  // Serves bytes held (up to the end of what is held), or, at an offset past them, fetches
  // more (at least double what is held, within the limits). An Error past limits.max_bytes or
  // for a failed request.
  Expected<std::size_t> read_at(std::uint64_t offset, void* out, std::size_t count) override;

  // The URL the file was found at, after redirects.
  const std::string& url() const { return m_url; }
  // The URL asked for.
  const std::string& asked_url() const { return m_asked; }
  // Bytes of the file held (fetched, or from the cache).
  std::uint64_t fetched() const { return m_bytes.size(); }
  // Body bytes received from the server by this read.
  std::uint64_t downloaded() const { return m_downloaded; }
  // Whether the first bytes came from the cache.
  bool from_cache() const { return m_from_cache; }
  // Whether the server ignored Range and sent the whole file, which is held (a file within
  // limits.whole_file_bytes).
  bool whole_file() const { return m_whole; }
  // Saves what is held to the cache (when options.cache_dir is set and the file has a
  // validator). The Error of the write, naming the file.
  Status save_to_cache() const;
  // The file's validator: its ETag, else its Last-Modified, else "".
  const std::string& validator() const { return m_validator; }

 private:
  RemoteFile(std::string asked, RemoteOptions options)
      : m_asked(std::move(asked)), m_options(std::move(options)) {}
  Status fetch_to(std::uint64_t end);
  // Uses the cache's entry when the server still has the same file; false when it has none.
  Expected<bool> use_cached();

  std::string m_asked;
  std::string m_url;
  RemoteOptions m_options;
  std::uint64_t m_size = 0;
  std::string m_bytes;  // the file's first bytes
  std::string m_validator;
  std::uint64_t m_downloaded = 0;
  bool m_from_cache = false;
  bool m_whole = false;
};

}  // namespace gb10tune::http
