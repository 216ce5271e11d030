// One HTTP/1.x response read from bytes as they arrive, within a size cap that counts everything
// received (status line, headers, chunk framing and body). Pure: the socket is the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::http {

// What the server answered. Any status counts as an answer; callers judge it.
struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
};

// Every header of a response as received, the names in lower case, in order.
struct HttpHeaders {
  std::vector<std::pair<std::string, std::string>> items;

  // The value of the first header called `name` (lower case), or "" when there is none.
  std::string get(std::string_view name) const;
};

// Reads a response: the body by Content-Length, by chunks (Transfer-Encoding: chunked) or up to
// the end of the connection; interim 1xx answers are skipped; 204 and 304 have no body.
class ResponseReader {
 public:
  // Holds at most `max_bytes` of the answer, as received.
  explicit ResponseReader(std::size_t max_bytes) : m_max_bytes(max_bytes) {}

  // Takes the next bytes received. An Error, worded to follow "the answer from URL ", once the
  // answer exceeds the cap (or announces a body that would) or is not HTTP; every later call
  // returns it again. Bytes after a complete response are ignored.
  Status feed(std::string_view bytes);
  // The peer closed the connection: completes a body that runs to the end. An Error, worded to
  // follow "the answer from URL ", when the answer is incomplete.
  Status finish();

  // True once a whole response has been read.
  bool complete() const { return m_stage == Stage::done; }
  // Bytes received so far.
  std::uint64_t received() const { return m_received; }
  // The status and headers of the final answer, once read (before its body): a caller may
  // stop reading an answer it does not want.
  bool headers_read() const {
    return m_stage != Stage::status_line && m_stage != Stage::headers && m_stage != Stage::failed;
  }
  const HttpResponse& head() const { return m_response; }
  // The final answer's headers (those of interim 1xx answers are dropped).
  const HttpHeaders& headers() const { return m_headers; }
  // The response, once complete() (moved out).
  HttpResponse take() { return std::move(m_response); }

 private:
  enum class Stage {
    status_line,
    headers,
    sized_body,
    chunk_size,
    chunk_data,
    chunk_end,
    trailers,
    body_to_close,
    done,
    failed
  };

  Status advance();
  Status on_line(std::string_view line);
  bool next_line(std::string_view& line);
  Status on_status_line(std::string_view line);
  Status on_header(std::string_view line);
  Status on_headers_end();
  Status on_chunk_size(std::string_view line);
  void take_body(std::uint64_t& left);
  Status fail(std::string message);
  Status too_large(std::string_view what);

  std::size_t m_max_bytes;
  std::uint64_t m_received = 0;
  std::string m_raw;  // received bytes not yet consumed (from m_pos)
  std::size_t m_pos = 0;
  Stage m_stage = Stage::status_line;
  Error m_error;
  HttpResponse m_response;
  HttpHeaders m_headers;
  bool m_chunked = false;
  bool m_has_length = false;
  std::uint64_t m_length = 0;  // Content-Length, or what is left of it / of the current chunk
};

}  // namespace gb10tune::http
