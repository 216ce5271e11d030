// Range requests over the HTTP client: the URL, one ranged GET with its redirects (followed here,
// one bounded request a hop, so that a loop, a downgrade to http and each hop's answer are judged
// before anything more is asked), and the growing prefix of the file that RemoteFile serves the
// reader from.
#include "gb10tune/http/remote_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include "gb10tune/http/header_cache.hpp"
#include "gb10tune/http/http_client.hpp"
#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::http {

namespace {

using Clock = std::chrono::steady_clock;

// Room for the status line and headers of a ranged answer beyond its body.
constexpr std::size_t kHeadRoom = 64 * 1024;

// A remote file's URL: http[s]://HOST[:PORT]/PATH[?QUERY].
struct FileUrl {
  std::string scheme;
  std::string host;
  int port = 80;     // 443 by default for https
  std::string path;  // from the first '/', query included

  std::string to_string() const {
    return fmt::format("{}://{}{}", scheme, format_host_port(host, port), path);
  }
};

Expected<FileUrl> parse_file_url(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return Error{fmt::format("bad model URL '{}': {}", text, why), ExitCode::usage};
  };
  const auto scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) {
    return bad("give http[s]://HOST[:PORT]/PATH");
  }
  FileUrl url;
  url.scheme = ascii_lower(text.substr(0, scheme_end));
  if (url.scheme != "http" && url.scheme != "https") {
    return bad(fmt::format("unknown scheme '{}'; give http[s]://HOST[:PORT]/PATH", url.scheme));
  }
  url.port = url.scheme == "https" ? 443 : 80;
  std::string_view rest = text.substr(scheme_end + 3);
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos || slash + 1 == rest.size()) {
    return bad("it names no file; give http[s]://HOST[:PORT]/PATH");
  }
  url.path = std::string(rest.substr(slash));
  const auto authority = parse_host_port(rest.substr(0, slash), url.port);
  if (!authority) {
    return bad(authority.error().message);
  }
  url.host = authority->host;
  url.port = authority->port;
  return url;
}

// A 206's Content-Range "bytes FIRST-LAST/TOTAL".
struct ContentRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t total = 0;
};

std::optional<ContentRange> parse_content_range(std::string_view text) {
  if (!starts_with(text, "bytes ")) {
    return std::nullopt;
  }
  text.remove_prefix(6);
  const auto dash = text.find('-');
  const auto slash = text.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return std::nullopt;
  }
  const auto first = parse_u64(text.substr(0, dash));
  const auto last = parse_u64(text.substr(dash + 1, slash - dash - 1));
  const auto total = parse_u64(text.substr(slash + 1));
  if (!first || !last || !total || *last < *first || *last >= *total) {
    return std::nullopt;
  }
  return ContentRange{*first, *last, *total};
}

// What a ranged GET brought back.
struct RangeAnswer {
  std::string url;  // after redirects
  ContentRange range;
  std::string body;
  std::string validator;
  bool whole = false;  // a 200: the server ignored Range and sent the whole file
};

// Refuses every answer but 206, a redirect, and a 200 (Range ignored) whose Content-Length is
// within `whole_limit`, before its body is read.
Status check_head(const HttpResponse& head, const HttpHeaders& headers, const std::string& url,
                  std::uint64_t asked, std::uint64_t whole_limit) {
  if (head.status == 206 || (head.status >= 300 && head.status < 400 && head.status != 304)) {
    return {};
  }
  if (head.status == 200) {
    const std::string length = headers.get("content-length");
    const auto size = parse_u64(length);
    if (size && *size > 0 && *size <= whole_limit) {
      return {};  // a small file from a server without Range (python3 -m http.server): read whole
    }
    return Error{
        fmt::format("{} ignores Range requests: asked for {} bytes, it began sending the "
                    "whole file{}, more than the {} gb10tune reads whole. gb10tune "
                    "stopped at once (it never downloads a model to plan it); serve it "
                    "from a server that honours Range, or download the file, or its "
                    "header with another tool, and plan the local copy",
                    url, asked, length.empty() ? " (of unknown size)" : " (" + length + " bytes)",
                    format_bytes(whole_limit)),
        ExitCode::failed};
  }
  const char* why = head.status == 404   ? " (not found: check the URL, and the file's name)"
                    : head.status == 403 ? " (forbidden: a gated model needs its token or a "
                                           "download by hand)"
                                         : "";
  return Error{fmt::format("{} answered HTTP {}{}; nothing was read", url, head.status, why),
               ExitCode::failed};
}

// One ranged GET of `url` to its final answer, following up to max_redirects redirects.
Expected<RangeAnswer> range_get(std::string url, std::uint64_t first, std::uint64_t last,
                                const RemoteOptions& options) {
  std::set<std::string> visited;
  for (int hop = 0;; ++hop) {
    if (!visited.insert(url).second) {
      return Error{fmt::format("the redirects loop: {} was reached twice; check the URL", url),
                   ExitCode::failed};
    }
    auto parsed = parse_file_url(url);
    if (!parsed) {
      return parsed.error();
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        options.limits.deadline - Clock::now());
    if (left.count() <= 0) {
      return Error{fmt::format("the header read ran out of time before asking {} for bytes {}-{}",
                               url, first, last),
                   ExitCode::failed};
    }
    const std::uint64_t asked = last - first + 1;
    const std::uint64_t whole_limit = first == 0 ? options.limits.whole_file_bytes : 0;
    HttpRequest request;
    request.url = url;
    request.range = fmt::format("{}-{}", first, last);
    request.timeout = std::min(left, options.limits.per_request);
    request.max_bytes = std::max(asked, whole_limit) + kHeadRoom;
    request.proxies = options.env;
    request.check = [&](const HttpResponse& head, const HttpHeaders& headers) {
      return check_head(head, headers, url, asked, whole_limit);
    };
    auto answer = http_request(request);
    if (!answer) {
      return answer.error();
    }
    const HttpHeaders& headers = answer->headers;
    std::string validator = headers.get("etag");
    if (validator.empty()) {
      validator = headers.get("last-modified");
    }
    if (answer->response.status == 200) {
      const std::uint64_t size = answer->response.body.size();
      if (size == 0 || parse_u64(headers.get("content-length")) != size) {
        return Error{fmt::format("{} ignored Range and its answer was cut off ({} bytes of {}); "
                                 "try again",
                                 url, size, headers.get("content-length")),
                     ExitCode::failed};
      }
      return RangeAnswer{url, ContentRange{0, size - 1, size}, std::move(answer->response.body),
                         std::move(validator), true};
    }
    if (answer->response.status != 206) {
      if (answer->redirect_url.empty()) {
        return Error{
            fmt::format("{} answered HTTP {} without a Location", url, answer->response.status),
            ExitCode::failed};
      }
      if (hop >= options.limits.max_redirects) {
        return Error{fmt::format("more than {} redirects from {}; check the URL",
                                 options.limits.max_redirects, url),
                     ExitCode::failed};
      }
      url = answer->redirect_url;
      if (parsed->scheme == "https" && !starts_with(ascii_lower(url), "https://")) {
        return Error{fmt::format("{} redirects to {}, which drops TLS (https to http); gb10tune "
                                 "does not follow a redirect that downgrades the connection. Ask "
                                 "the server for an https location, or give the http URL "
                                 "yourself if plain http is what you mean",
                                 parsed->to_string(), url),
                     ExitCode::failed};
      }
      continue;
    }
    const std::string& body = answer->response.body;
    const auto range = parse_content_range(headers.get("content-range"));
    if (!range || range->first != first || body.size() != range->last - first + 1) {
      return Error{fmt::format("{} answered bytes {}-{} with Content-Range '{}' and {} bytes; the "
                               "server's range support is broken",
                               url, first, last, headers.get("content-range"), body.size()),
                   ExitCode::failed};
    }
    return RangeAnswer{url, *range, std::move(answer->response.body), std::move(validator)};
  }
}

}  // namespace

bool is_remote_url(std::string_view text) {
  const std::string scheme = ascii_lower(text.substr(0, text.find("://")));
  return text.find("://") != std::string_view::npos && (scheme == "http" || scheme == "https");
}

Expected<bool> RemoteFile::use_cached() {
  if (!m_options.cache_dir) {
    return false;
  }
  auto entry = load_cached_prefix(*m_options.cache_dir, m_asked);
  if (!entry) {
    return false;
  }
  auto answer = range_get(m_asked, 0, 0, m_options);
  if (!answer) {
    return answer.error();
  }
  m_downloaded += answer->body.size();
  if (answer->range.total != entry->size || answer->validator != entry->validator) {
    return false;
  }
  m_url = std::move(answer->url);
  m_size = entry->size;
  m_validator = std::move(entry->validator);
  m_bytes = std::move(entry->bytes);
  m_from_cache = true;
  return true;
}

Status RemoteFile::save_to_cache() const {
  if (!m_options.cache_dir) {
    return {};
  }
  return save_cached_prefix(*m_options.cache_dir, {m_asked, m_size, m_validator, m_bytes});
}

Expected<RemoteFile> RemoteFile::open(const std::string& url, const RemoteOptions& options) {
  RemoteFile file(url, options);
  auto cached = file.use_cached();
  if (!cached) {
    return cached.error();
  }
  if (!*cached) {
    auto answer =
        range_get(url, 0, std::max<std::uint64_t>(options.limits.first_bytes, 1) - 1, options);
    if (!answer) {
      return answer.error();
    }
    file.m_url = std::move(answer->url);
    file.m_size = answer->range.total;
    file.m_downloaded += answer->body.size();
    file.m_bytes = std::move(answer->body);
    file.m_validator = std::move(answer->validator);
    file.m_whole = answer->whole;
  }
  if (options.progress) {
    options.progress(file.fetched(), file.m_size);
  }
  return file;
}

Status RemoteFile::fetch_to(std::uint64_t end) {
  const std::uint64_t cap = std::min(m_size, m_options.limits.max_bytes);
  if (end > cap) {
    return Error{
        fmt::format("the header runs past the {} this read may fetch ({} fetched); no real "
                    "model has a header that large, so the file is corrupt or hostile",
                    format_bytes(m_options.limits.max_bytes), format_bytes(fetched()))};
  }
  const std::uint64_t from = fetched();
  const std::uint64_t to = std::min(cap, std::max(end, 2 * from));
  auto answer = range_get(m_url, from, to - 1, m_options);
  if (!answer) {
    return answer.error();
  }
  if (answer->range.total != m_size || answer->validator != m_validator) {
    return Error{
        fmt::format("{} changed while its header was read (size or validator); try "
                    "again",
                    m_url)};
  }
  m_bytes += answer->body;
  m_downloaded += answer->body.size();
  if (m_options.progress) {
    m_options.progress(fetched(), m_size);
  }
  return {};
}

Expected<std::size_t> RemoteFile::read_at(std::uint64_t offset, void* out, std::size_t count) {
  std::uint64_t end = std::min<std::uint64_t>(offset + count, m_size);
  if (offset < fetched()) {
    end = std::min(end, fetched());  // what is held first: more only when it is read past
  } else if (Status got = fetch_to(end); !got) {
    return got.error();
  }
  const std::size_t n = static_cast<std::size_t>(end - offset);
  std::memcpy(out, m_bytes.data() + offset, n);
  return n;
}

}  // namespace gb10tune::http
