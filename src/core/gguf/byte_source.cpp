#include "byte_source.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace gb10tune::gguf::detail {

ByteSource::ByteSource(std::span<const std::uint8_t> bytes)
    : m_memory(bytes), m_size(bytes.size()), m_window_size(bytes.size()) {}

ByteSource::ByteSource(platform::Fd fd, std::uint64_t size) : m_fd(std::move(fd)), m_size(size) {}

ByteSource::ByteSource(HeaderSource& source) : m_remote(&source), m_size(source.size()) {}

Status ByteSource::fill_window() {
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(kWindowBytes, remaining()));
  if (m_buffer.size() < want) {
    m_buffer.resize(want);
  }
  std::size_t got = 0;
  while (got < want) {
    const std::uint64_t at = m_position + got;
    const auto n = m_remote != nullptr
                       ? m_remote->read_at(at, m_buffer.data() + got, want - got)
                       : platform::read_at(m_fd, at, m_buffer.data() + got, want - got);
    if (!n) {
      return n.error();
    }
    if (*n == 0) {
      return Error{"the file ended early (was it changed while being read?)"};
    }
    got += *n;
    if (m_remote != nullptr) {
      // A remote source serves what it holds: the window is that much, so that it fetches
      // more only when the parser reads past it.
      break;
    }
  }
  m_window_start = m_position;
  m_window_size = got;
  return {};
}

Status ByteSource::read(void* out, std::size_t count) {
  if (count > remaining()) {
    throw std::logic_error("ByteSource::read past the end");
  }
  auto* target = static_cast<std::uint8_t*>(out);
  while (count > 0) {
    if (m_position < m_window_start || m_position >= m_window_start + m_window_size) {
      if (!windowed()) {
        throw std::logic_error("ByteSource: memory window out of range");
      }
      if (Status filled = fill_window(); !filled) {
        return filled;
      }
    }
    const std::size_t in_window = static_cast<std::size_t>(m_position - m_window_start);
    const std::uint8_t* from = windowed() ? m_buffer.data() : m_memory.data();
    const std::size_t chunk = std::min(count, m_window_size - in_window);
    std::memcpy(target, from + in_window, chunk);
    target += chunk;
    count -= chunk;
    m_position += chunk;
  }
  return {};
}

}  // namespace gb10tune::gguf::detail
