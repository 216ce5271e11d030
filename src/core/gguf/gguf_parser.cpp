// The GGUF parser's reader (bounded reads, the memory charge) and the file header; parse_gguf and
// read_gguf.
#include "gguf_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "gb10tune/platform/fd.hpp"

namespace gb10tune::gguf {

using namespace parsing;

GgufParser::GgufParser(detail::ByteSource& source, std::string name, Completeness completeness)
    : m_source(source), m_completeness(completeness) {
  m_file.m_source = std::move(name);
  m_file.m_file_size = source.size();
}

Expected<GgufFile> GgufParser::parse() {
  if (Status s = parse_header(); !s) {
    return s.error();
  }
  if (Status s = parse_metadata(); !s) {
    return s.error();
  }
  if (Status s = parse_tensor_infos(); !s) {
    return s.error();
  }
  if (Status s = check_data_section(); !s) {
    return s.error();
  }
  return std::move(m_file);
}

Error GgufParser::fail(std::uint64_t offset, const std::string& message) const {
  return Error{fmt::format("{}: offset {}: {}", m_file.m_source, offset, message)};
}

// Checks that `count` more bytes exist (and stay within the header cap) before reading
// `what`.
Status GgufParser::need(std::uint64_t count, const Field& what) const {
  const std::uint64_t at = m_source.position();
  if (count > m_source.remaining()) {
    return fail(at, fmt::format("the file ends inside {} ({} bytes needed, {} left of {}); {}",
                                what.describe(), count, m_source.remaining(), m_source.size(),
                                kTruncatedFix));
  }
  if (count > kMaxHeaderBytes - std::min(at, kMaxHeaderBytes)) {
    return fail(at, fmt::format("{} would take the header past {} MiB; no real model has "
                                "a header that large, so the file is corrupt",
                                what.describe(), kMaxHeaderBytes >> 20));
  }
  return {};
}

// Bytes that may still be read: what the file holds, within the header cap.
std::uint64_t GgufParser::header_room() const {
  const std::uint64_t at = m_source.position();
  return std::min(m_source.remaining(), kMaxHeaderBytes - std::min(at, kMaxHeaderBytes));
}

// Charges `bytes` of memory that the parsed header will hold for `what` (read at `at`)
// against kMaxHeaderMemory; an Error naming the field and the limit once it would pass.
Status GgufParser::charge(std::uint64_t bytes, const Field& what, std::uint64_t at) {
  if (bytes > kMaxHeaderMemory - m_file.m_memory_bytes) {
    return fail(at,
                fmt::format("{} would take the parsed header past {} MiB of memory ({} MiB "
                            "held before it); real models need a few tens of MiB even "
                            "with a 262k-token vocabulary and its merges, so the file is "
                            "corrupt or hostile",
                            what.describe(), kMaxHeaderMemory >> 20, m_file.m_memory_bytes >> 20));
  }
  m_file.m_memory_bytes += bytes;
  return {};
}

Status GgufParser::read_bytes(void* out, std::size_t count, const Field& what) {
  if (Status s = need(count, what); !s) {
    return s;
  }
  const std::uint64_t at = m_source.position();
  if (Status s = m_source.read(out, count); !s) {
    return fail(at, fmt::format("cannot read {}: {}", what.describe(), s.error().message));
  }
  return {};
}

Expected<std::string> GgufParser::read_string(const Field& what) {
  const std::uint64_t at = m_source.position();
  const auto length = read_number<std::uint64_t>(what);
  if (!length) {
    return length.error();
  }
  if (*length > m_source.size()) {
    return fail(at, fmt::format("string length {} ({}) exceeds the file size {}; {}", *length,
                                what.describe(), m_source.size(), kTruncatedFix));
  }
  if (*length > m_source.remaining()) {
    return fail(at, fmt::format("string length {} ({}) runs past the end of the file ({} "
                                "bytes left of {}); {}",
                                *length, what.describe(), m_source.remaining(), m_source.size(),
                                kTruncatedFix));
  }
  if (Status s = need(*length, what); !s) {
    return s.error();
  }
  if (Status s = charge(string_heap_bytes(*length), what, at); !s) {
    return s.error();
  }
  std::string text(static_cast<std::size_t>(*length), '\0');
  if (Status s = read_bytes(text.data(), text.size(), what); !s) {
    return s.error();
  }
  return text;
}

Status GgufParser::parse_header() {
  const std::uint64_t size = m_source.size();
  if (size == 0) {
    return fail(0, "the file is empty; it is not a GGUF model (download it again)");
  }
  if (size < 4) {
    return fail(0, fmt::format("the file is only {} bytes long, too short to be GGUF; {}", size,
                               kTruncatedFix));
  }
  std::uint8_t magic[4] = {0, 0, 0, 0};
  if (Status s = read_bytes(magic, 4, {"the magic"}); !s) {
    return s;
  }
  std::uint32_t magic_value = 0;
  std::memcpy(&magic_value, magic, 4);
  if (magic_value != kGgufMagic) {
    return fail(0, fmt::format("not a GGUF file: it starts with '{}' (0x{:02x}{:02x}{:02x}{:02x}) "
                               "instead of 'GGUF'; is it a safetensors or other model file?",
                               printable_magic(magic, 4), magic[0], magic[1], magic[2], magic[3]));
  }

  const auto version = read_number<std::uint32_t>({"the version"});
  if (!version) {
    return version.error();
  }
  m_file.m_version = *version;
  if (*version == 1) {
    return fail(4,
                "GGUF version 1 is no longer supported (llama.cpp dropped it too); "
                "convert the model again with a current llama.cpp");
  }
  if (*version != 0 && (*version & 0xFFFFu) == 0) {
    return fail(4, fmt::format("GGUF version {} looks byte-swapped: this is a big-endian "
                               "file, which llama.cpp cannot load on this machine",
                               *version));
  }
  if (*version == 0 || *version > 3) {
    return fail(4, fmt::format("unsupported GGUF version {} (gb10tune reads versions 2 and "
                               "3); the file is corrupt or from a newer GGUF revision",
                               *version));
  }

  const std::uint64_t count_at = m_source.position();
  const auto tensors = read_number<std::uint64_t>({"the tensor count"});
  if (!tensors) {
    return tensors.error();
  }
  const auto entries = read_number<std::uint64_t>({"the metadata count"});
  if (!entries) {
    return entries.error();
  }
  const std::uint64_t left = m_source.remaining();
  if (*tensors > left / kMinTensorInfoBytes) {
    return fail(count_at,
                fmt::format("tensor count {} cannot fit: each tensor info takes at "
                            "least {} bytes and only {} bytes follow (file size "
                            "{}); {}",
                            *tensors, kMinTensorInfoBytes, left, m_source.size(), kTruncatedFix));
  }
  if (*entries > left / kMinEntryBytes) {
    return fail(count_at + 8,
                fmt::format("metadata count {} cannot fit: each entry takes at least {} "
                            "bytes and only {} bytes follow (file size {}); {}",
                            *entries, kMinEntryBytes, left, m_source.size(), kTruncatedFix));
  }
  const std::uint64_t room = header_room();
  if (*tensors > room / kMinTensorInfoBytes || *entries > room / kMinEntryBytes) {
    return fail(count_at, fmt::format("{} tensors and {} metadata entries would take the "
                                      "header past {} MiB; the file is corrupt",
                                      *tensors, *entries, kMaxHeaderBytes >> 20));
  }
  if (Status s = charge(*entries * (sizeof(MetadataEntry) + kIndexEntryBytes),
                        {"the metadata entries"}, count_at + 8);
      !s) {
    return s;
  }
  if (Status s = charge(*tensors * (sizeof(TensorInfo) + kIndexEntryBytes), {"the tensor infos"},
                        count_at);
      !s) {
    return s;
  }
  m_tensor_count = *tensors;
  m_entry_count = *entries;
  // Exactly the announced sizes: no growth slack, and the memory is already charged.
  m_file.m_metadata.reserve(static_cast<std::size_t>(*entries));
  m_file.m_key_index.reserve(static_cast<std::size_t>(*entries));
  m_file.m_tensors.reserve(static_cast<std::size_t>(*tensors));
  m_file.m_tensor_index.reserve(static_cast<std::size_t>(*tensors));
  return {};
}

Expected<GgufFile> parse_gguf(std::span<const std::uint8_t> bytes, std::string_view name) {
  detail::ByteSource source(bytes);
  return GgufParser(source, std::string(name)).parse();
}

Expected<GgufFile> read_gguf(HeaderSource& source, std::string_view name) {
  detail::ByteSource bytes(source);
  return GgufParser(bytes, std::string(name)).parse();
}

Expected<GgufFile> read_gguf(const std::filesystem::path& path, Completeness completeness) {
  auto fd = platform::open_read_only(path);
  if (!fd) {
    return Error{
        fmt::format("cannot open {}: {}; check the model path", path.string(), fd.error().message)};
  }
  const auto facts = platform::open_file_facts(*fd);
  if (!facts) {
    return Error{fmt::format("cannot stat {}: {}", path.string(), facts.error().message)};
  }
  if (!facts->regular) {
    return Error{
        fmt::format("{} is not a regular file; give the path of a .gguf model", path.string())};
  }
  detail::ByteSource source(std::move(*fd), facts->size);
  return GgufParser(source, path.string(), completeness).parse();
}

}  // namespace gb10tune::gguf
