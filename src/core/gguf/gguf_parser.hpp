// The GGUF header parser behind read_gguf and parse_gguf (private to src/core/gguf): every
// count and length is checked against the bytes left in the file (and kMaxHeaderBytes) before
// anything is allocated, and the memory every value will hold is charged against
// kMaxHeaderMemory before it is read. gguf_parser.cpp holds the reader and the header,
// gguf_metadata.cpp the key-value pairs, gguf_tensor_infos.cpp the tensor table and data section.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "byte_source.hpp"
#include "gb10tune/gguf/gguf_file.hpp"

namespace gb10tune::gguf {

namespace parsing {

constexpr std::uint64_t kMaxKeyLength = 65535;  // the GGUF specification's limit
// Smallest possible records: a key (its 8-byte length, the key itself checked later), a type
// and a 1-byte value; a tensor info (name length, n_dims, type, offset).
constexpr std::uint64_t kMinEntryBytes = 8 + 4 + 1;
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;
constexpr const char* kTruncatedFix =
    "the file is truncated or corrupt; download or convert it again";

inline std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  const std::uint64_t rest = value % alignment;
  return rest == 0 ? value : value + (alignment - rest);
}

// Smallest number of bytes one array element of `type` takes in the file.
inline std::uint64_t min_element_bytes(ValueType type) {
  if (type == ValueType::string) {
    return 8;  // the length
  }
  if (type == ValueType::array) {
    return 4 + 8;  // element type and count
  }
  return fixed_value_size(type);
}

inline std::string printable_magic(const std::uint8_t* bytes, std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    const auto c = static_cast<char>(bytes[i]);
    text += (c >= 0x20 && c < 0x7f) ? c : '.';
  }
  return text;
}

constexpr std::uint64_t kNoIndex = ~std::uint64_t{0};

// What one heap allocation costs beyond the bytes asked for (glibc's chunk header and
// rounding), charged with every vector and long string.
constexpr std::uint64_t kAllocationOverhead = 16;

// Heap bytes a std::string of `length` characters holds beyond the object itself: nothing
// while it fits the small-string buffer, else its characters, the terminator and the overhead.
inline std::uint64_t string_heap_bytes(std::uint64_t length) {
  static const std::uint64_t small = std::string().capacity();
  return length <= small ? 0 : length + 1 + kAllocationOverhead;
}

// One entry of an unordered_map<std::string, std::size_t> index (the key's heap buffer aside):
// its node (next pointer, the pair, the cached hash), the allocation overhead and its bucket.
constexpr std::uint64_t kIndexEntryBytes =
    sizeof(void*) + sizeof(std::pair<const std::string, std::size_t>) + sizeof(std::size_t) +
    kAllocationOverhead + sizeof(void*);

// Names the field being read for messages; formatted only when an error is reported, so
// reading 150k tokenizer strings costs no formatting.
struct Field {
  std::string_view text;           // "the value of", "element", "metadata key", …
  std::string_view key = {};       // the key or tensor name it belongs to, if any
  std::uint64_t index = kNoIndex;  // the element or entry number, if any

  std::string describe() const {
    std::string out(text);
    if (index != kNoIndex) {
      out += fmt::format(" {}", index);
    }
    if (!key.empty()) {
      out += index != kNoIndex ? " of '" : " '";
      out += key;
      out += '\'';
    }
    return out;
  }
};

}  // namespace parsing

using parsing::Field;

// Reads one GGUF header from a byte source into a GgufFile (its friend).
class GgufParser {
 public:
  // With `header_only`, tensor data the source does not hold is not an Error (the file is a
  // header-only copy); the offsets and sizes are checked all the same.
  GgufParser(detail::ByteSource& source, std::string name,
             Completeness completeness = Completeness::whole_file);

  // The whole header: the Error of the first part that is wrong, naming the offset.
  Expected<GgufFile> parse();

 private:
  Error fail(std::uint64_t offset, const std::string& message) const;

  // Checks that `count` more bytes exist (and stay within the header cap) before reading
  // `what`.
  Status need(std::uint64_t count, const Field& what) const;

  // Bytes that may still be read: what the file holds, within the header cap.
  std::uint64_t header_room() const;

  // Charges `bytes` of memory that the parsed header will hold for `what` (read at `at`)
  // against kMaxHeaderMemory; an Error naming the field and the limit once it would pass.
  Status charge(std::uint64_t bytes, const Field& what, std::uint64_t at);

  Status read_bytes(void* out, std::size_t count, const Field& what);

  template <class T>
  Expected<T> read_number(const Field& what) {
    T value{};
    if (Status s = read_bytes(&value, sizeof(T), what); !s) {
      return s.error();
    }
    return value;
  }

  Expected<std::string> read_string(const Field& what);

  Status parse_header();

  Expected<ValueType> read_type(std::string_view key, const Field& what);

  Expected<Array> read_array(std::string_view key, int depth);

  Expected<Value> read_value(ValueType type, std::string_view key);

  template <class T>
  Expected<Value> read_uint(ValueType type, const Field& what);

  template <class T>
  Expected<Value> read_int(ValueType type, const Field& what);

  Status parse_metadata();

  Status parse_tensor_infos();

  Status check_data_section();

  // Whether the data of a tensor ending at `end` lies past what the source holds, which only
  // a header-only read accepts (it then marks the file header-only).
  bool data_absent(std::uint64_t end);

  detail::ByteSource& m_source;
  Completeness m_completeness;
  GgufFile m_file;
  std::uint64_t m_tensor_count = 0;
  std::uint64_t m_entry_count = 0;
};

}  // namespace gb10tune::gguf
