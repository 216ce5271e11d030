// An incremental HTTP/1.x response parser: every line, header and chunk is taken as far as the
// bytes go, and nothing is held beyond the cap.
#include "gb10tune/http/response_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::http {

namespace {

// Consumed bytes are dropped from the front once this many have gathered.
constexpr std::size_t kCompactAt = 64 * 1024;

// At most 40 characters of what the peer sent, unprintable ones as '?', for a message.
std::string shown(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 40)) {
    out += c >= 0x20 && c < 0x7f ? c : '?';
  }
  return text.size() > 40 ? out + "…" : out;
}

// "16 MiB", "64 KiB", "1000 bytes".
std::string cap_words(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  if (bytes >= 1024 && bytes % 1024 == 0) {
    return fmt::format("{} KiB", bytes >> 10);
  }
  return fmt::format("{} bytes", bytes);
}

std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || stop != end) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

Status ResponseReader::feed(std::string_view bytes) {
  if (m_stage == Stage::failed) {
    return m_error;
  }
  if (m_stage == Stage::done) {
    return {};
  }
  m_received += bytes.size();
  if (m_received > m_max_bytes) {
    return too_large("headers and body together");
  }
  if (m_pos >= kCompactAt) {
    m_raw.erase(0, m_pos);
    m_pos = 0;
  }
  m_raw.append(bytes);
  return advance();
}

Status ResponseReader::finish() {
  if (m_stage == Stage::failed) {
    return m_error;
  }
  if (m_stage == Stage::body_to_close) {
    m_response.body.append(m_raw, m_pos);
    m_pos = m_raw.size();
    m_stage = Stage::done;
  }
  if (m_stage == Stage::done) {
    return {};
  }
  std::string where = "in its headers";
  if (m_stage == Stage::sized_body) {
    where = fmt::format("with {} body bytes still to come", m_length);
  } else if (m_stage != Stage::status_line && m_stage != Stage::headers) {
    where = "before its last chunk";
  }
  return fail(
      fmt::format("ended early: the connection closed after {} bytes, {}", m_received, where));
}

Status ResponseReader::advance() {
  while (m_stage != Stage::done && m_stage != Stage::failed) {
    if (m_stage == Stage::body_to_close) {
      m_response.body.append(m_raw, m_pos);
      m_pos = m_raw.size();
      return {};
    }
    if (m_stage == Stage::sized_body || m_stage == Stage::chunk_data) {
      take_body(m_length);
      if (m_length > 0) {
        return {};
      }
      m_stage = m_stage == Stage::sized_body ? Stage::done : Stage::chunk_end;
      continue;
    }
    std::string_view line;
    if (!next_line(line)) {
      return {};
    }
    if (auto status = on_line(line); !status) {
      return status;
    }
  }
  return m_stage == Stage::failed ? Status(m_error) : Status();
}

Status ResponseReader::on_line(std::string_view line) {
  switch (m_stage) {
    case Stage::status_line:
      return on_status_line(line);
    case Stage::headers:
      return line.empty() ? on_headers_end() : on_header(line);
    case Stage::chunk_size:
      return on_chunk_size(line);
    case Stage::chunk_end:
      if (!line.empty()) {
        return fail(fmt::format("is not HTTP: a chunk runs past its size ('{}')", shown(line)));
      }
      m_stage = Stage::chunk_size;
      return {};
    default:  // the trailers, up to their blank line
      if (line.empty()) {
        m_stage = Stage::done;
      }
      return {};
  }
}

bool ResponseReader::next_line(std::string_view& line) {
  const auto end = m_raw.find('\n', m_pos);
  if (end == std::string::npos) {
    return false;
  }
  line = std::string_view(m_raw).substr(m_pos, end - m_pos);
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  m_pos = end + 1;
  return true;
}

std::string HttpHeaders::get(std::string_view name) const {
  for (const auto& [key, value] : items) {
    if (key == name) {
      return value;
    }
  }
  return {};
}

Status ResponseReader::on_status_line(std::string_view line) {
  // "HTTP/1.1 200 OK": the version, a space, three digits, then a space and a reason or nothing.
  const bool shaped = starts_with(line, "HTTP/1.") && line.size() >= 12 && line[8] == ' ' &&
                      (line.size() == 12 || line[12] == ' ');
  const auto code = shaped ? parse_decimal(line.substr(9, 3)) : std::nullopt;
  if (!code || *code < 100 || *code > 599) {
    return fail(fmt::format("is not HTTP: it begins '{}'", shown(line)));
  }
  m_response = HttpResponse{};
  m_headers = HttpHeaders{};
  m_response.status = static_cast<int>(*code);
  m_chunked = false;
  m_has_length = false;
  m_length = 0;
  m_stage = Stage::headers;
  return {};
}

Status ResponseReader::on_header(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0 || line.front() == ' ' ||
      line.front() == '\t' || line[colon - 1] == ' ') {
    return fail(fmt::format("is not HTTP: a header line reads '{}'", shown(line)));
  }
  const std::string name = ascii_lower(line.substr(0, colon));
  const std::string_view value = trim(line.substr(colon + 1));
  m_headers.items.emplace_back(name, value);
  if (name == "content-length") {
    const auto length = parse_decimal(value);
    if (!length || (m_has_length && *length != m_length)) {
      return fail(fmt::format("is not HTTP: Content-Length '{}'", shown(value)));
    }
    m_has_length = true;
    m_length = *length;
  } else if (name == "transfer-encoding") {
    // The last coding decides whether the body is chunked (RFC 9112 6.1).
    const auto comma = value.rfind(',');
    m_chunked =
        ascii_lower(trim(comma == std::string_view::npos ? value : value.substr(comma + 1))) ==
        "chunked";
  } else if (name == "content-type" && m_response.content_type.empty()) {
    m_response.content_type = std::string(value);
  }
  return {};
}

Status ResponseReader::on_headers_end() {
  const int status = m_response.status;
  if (status < 200) {
    m_stage = Stage::status_line;  // an interim answer: the real one follows
    return {};
  }
  if (status == 204 || status == 304) {
    m_stage = Stage::done;
  } else if (m_chunked) {
    m_stage = Stage::chunk_size;
  } else if (m_has_length) {
    if (m_length > m_max_bytes) {
      return too_large(fmt::format("it announced a body of {} bytes", m_length));
    }
    m_stage = m_length == 0 ? Stage::done : Stage::sized_body;
  } else {
    m_stage = Stage::body_to_close;
  }
  return {};
}

Status ResponseReader::on_chunk_size(std::string_view line) {
  const std::string_view digits = trim(line.substr(0, line.find(';')));
  std::uint64_t size = 0;
  const char* end = digits.data() + digits.size();
  const auto [stop, ec] = std::from_chars(digits.data(), end, size, 16);
  if (digits.empty() || ec != std::errc{} || stop != end) {
    return fail(fmt::format("is not HTTP: a chunk size reads '{}'", shown(line)));
  }
  if (size > m_max_bytes) {
    return too_large(fmt::format("it announced a chunk of {} bytes", size));
  }
  m_length = size;
  m_stage = size == 0 ? Stage::trailers : Stage::chunk_data;
  return {};
}

void ResponseReader::take_body(std::uint64_t& left) {
  const std::size_t available = m_raw.size() - m_pos;
  const std::size_t now = static_cast<std::size_t>(std::min<std::uint64_t>(left, available));
  m_response.body.append(m_raw, m_pos, now);
  m_pos += now;
  left -= now;
}

Status ResponseReader::fail(std::string message) {
  m_stage = Stage::failed;
  m_error = Error{std::move(message), ExitCode::failed};
  return m_error;
}

Status ResponseReader::too_large(std::string_view what) {
  return fail(fmt::format("exceeded {} ({})", cap_words(m_max_bytes), what));
}

}  // namespace gb10tune::http
