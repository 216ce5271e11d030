// Sequential reads from a GGUF file, a memory buffer or a HeaderSource. Files are read with pread
// in windows of at most 1 MiB, so reading a header never touches the tensor data behind it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/platform/fd.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::gguf::detail {

class ByteSource {
 public:
  static constexpr std::size_t kWindowBytes = 1u << 20;

  // Reads from `bytes`, which must outlive this source.
  explicit ByteSource(std::span<const std::uint8_t> bytes);
  // Reads `size` bytes from the open file `fd`, which this source owns.
  ByteSource(platform::Fd fd, std::uint64_t size);
  // Reads through `source`, which must outlive this source.
  explicit ByteSource(HeaderSource& source);
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;
  ~ByteSource() = default;

  std::uint64_t size() const { return m_size; }
  std::uint64_t position() const { return m_position; }
  std::uint64_t remaining() const { return m_size - m_position; }

  // Copies the next `count` bytes to `out` and advances; `count` must not exceed remaining()
  // (a bug otherwise). An Error (the system's reason, without the file name) only when the
  // read itself fails or the file shrank meanwhile.
  Status read(void* out, std::size_t count);

 private:
  Status fill_window();
  bool windowed() const { return m_fd.valid() || m_remote != nullptr; }

  std::span<const std::uint8_t> m_memory;
  platform::Fd m_fd;                 // none: reading from m_memory or m_remote
  HeaderSource* m_remote = nullptr;  // set: reading through it
  std::uint64_t m_size = 0;
  std::uint64_t m_position = 0;
  std::vector<std::uint8_t> m_buffer;
  std::uint64_t m_window_start = 0;
  std::size_t m_window_size = 0;
};

}  // namespace gb10tune::gguf::detail
