// The GGUF header parser behind read_gguf and parse_gguf. Every count and length is checked
// against the bytes left in the file (and kMaxHeaderBytes) before anything is allocated, and
// the memory every value will hold is charged against kMaxHeaderMemory before it is read.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <utility>

#include "byte_source.hpp"
#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/platform/fd.hpp"

namespace gb10tune::gguf {

namespace {

constexpr std::uint64_t kMaxKeyLength = 65535;  // the GGUF specification's limit
// Smallest possible records: a key (its 8-byte length, the key itself checked later), a type
// and a 1-byte value; a tensor info (name length, n_dims, type, offset).
constexpr std::uint64_t kMinEntryBytes = 8 + 4 + 1;
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;
constexpr const char* kTruncatedFix =
    "the file is truncated or corrupt; download or convert it again";

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  const std::uint64_t rest = value % alignment;
  return rest == 0 ? value : value + (alignment - rest);
}

// Smallest number of bytes one array element of `type` takes in the file.
std::uint64_t min_element_bytes(ValueType type) {
  if (type == ValueType::string) {
    return 8;  // the length
  }
  if (type == ValueType::array) {
    return 4 + 8;  // element type and count
  }
  return fixed_value_size(type);
}

std::string printable_magic(const std::uint8_t* bytes, std::size_t count) {
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
std::uint64_t string_heap_bytes(std::uint64_t length) {
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

}  // namespace

class GgufParser {
 public:
  GgufParser(detail::ByteSource& source, std::string name) : m_source(source) {
    m_file.m_source = std::move(name);
    m_file.m_file_size = source.size();
  }

  Expected<GgufFile> parse() {
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

 private:
  Error fail(std::uint64_t offset, const std::string& message) const {
    return Error{fmt::format("{}: offset {}: {}", m_file.m_source, offset, message)};
  }

  // Checks that `count` more bytes exist (and stay within the header cap) before reading
  // `what`.
  Status need(std::uint64_t count, const Field& what) const {
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
  std::uint64_t header_room() const {
    const std::uint64_t at = m_source.position();
    return std::min(m_source.remaining(), kMaxHeaderBytes - std::min(at, kMaxHeaderBytes));
  }

  // Charges `bytes` of memory that the parsed header will hold for `what` (read at `at`)
  // against kMaxHeaderMemory; an Error naming the field and the limit once it would pass.
  Status charge(std::uint64_t bytes, const Field& what, std::uint64_t at) {
    if (bytes > kMaxHeaderMemory - m_file.m_memory_bytes) {
      return fail(
          at, fmt::format("{} would take the parsed header past {} MiB of memory ({} MiB "
                          "held before it); real models need a few tens of MiB even "
                          "with a 262k-token vocabulary and its merges, so the file is "
                          "corrupt or hostile",
                          what.describe(), kMaxHeaderMemory >> 20, m_file.m_memory_bytes >> 20));
    }
    m_file.m_memory_bytes += bytes;
    return {};
  }

  Status read_bytes(void* out, std::size_t count, const Field& what) {
    if (Status s = need(count, what); !s) {
      return s;
    }
    const std::uint64_t at = m_source.position();
    if (Status s = m_source.read(out, count); !s) {
      return fail(at, fmt::format("cannot read {}: {}", what.describe(), s.error().message));
    }
    return {};
  }

  template <class T>
  Expected<T> read_number(const Field& what) {
    T value{};
    if (Status s = read_bytes(&value, sizeof(T), what); !s) {
      return s.error();
    }
    return value;
  }

  Expected<std::string> read_string(const Field& what) {
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

  Status parse_header() {
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
      return fail(0,
                  fmt::format("not a GGUF file: it starts with '{}' (0x{:02x}{:02x}{:02x}{:02x}) "
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

  Expected<ValueType> read_type(std::string_view key, const Field& what) {
    const std::uint64_t at = m_source.position();
    const auto id = read_number<std::uint32_t>(what);
    if (!id) {
      return id.error();
    }
    if (!is_value_type(*id)) {
      return fail(at, fmt::format("key '{}' has unknown value type {} (GGUF defines 0 to 12); "
                                  "the file is corrupt or from a newer GGUF revision",
                                  key, *id));
    }
    return static_cast<ValueType>(*id);
  }

  Expected<Array> read_array(std::string_view key, int depth) {
    const std::uint64_t at = m_source.position();
    if (depth > kMaxArrayDepth) {
      return fail(at, fmt::format("key '{}' nests arrays more than {} levels deep; the file is "
                                  "corrupt",
                                  key, kMaxArrayDepth));
    }
    const auto type = read_type(key, {"the element type of", key});
    if (!type) {
      return type.error();
    }
    const std::uint64_t count_at = m_source.position();
    const auto count = read_number<std::uint64_t>({"the length of", key});
    if (!count) {
      return count.error();
    }
    const std::uint64_t min_bytes = min_element_bytes(*type);
    if (*count > m_source.remaining() / min_bytes) {
      return fail(count_at,
                  fmt::format("key '{}' is an array of {} {} elements, which needs at least "
                              "{} bytes per element but only {} bytes are left (file size "
                              "{}); {}",
                              key, *count, value_type_name(*type), min_bytes, m_source.remaining(),
                              m_source.size(), kTruncatedFix));
    }
    if (*count > header_room() / min_bytes) {
      return fail(count_at,
                  fmt::format("key '{}' is an array of {} {} elements, which would "
                              "take the header past {} MiB; the file is corrupt",
                              key, *count, value_type_name(*type), kMaxHeaderBytes >> 20));
    }
    const std::uint64_t n = *count;
    // The elements' own storage is charged before anything is read (an element's heap
    // buffers and nested arrays as they come): a hostile count is refused at once, and the
    // vectors are reserved exactly, with no growth slack.
    const std::uint64_t element_bytes = *type == ValueType::string  ? sizeof(std::string)
                                        : *type == ValueType::array ? sizeof(Array)
                                                                    : min_bytes;
    if (Status s = charge(n * element_bytes + (n == 0 ? 0 : kAllocationOverhead),
                          {"the elements of", key}, count_at);
        !s) {
      return s.error();
    }
    if (*type == ValueType::string) {
      std::vector<std::string> strings;
      strings.reserve(static_cast<std::size_t>(n));
      for (std::uint64_t i = 0; i < n; ++i) {
        auto text = read_string({"element", key, i});
        if (!text) {
          return text.error();
        }
        strings.push_back(std::move(*text));
      }
      return Array::of_strings(std::move(strings));
    }
    if (*type == ValueType::array) {
      std::vector<Array> arrays;
      arrays.reserve(static_cast<std::size_t>(n));
      for (std::uint64_t i = 0; i < n; ++i) {
        auto inner = read_array(key, depth + 1);
        if (!inner) {
          return inner.error();
        }
        arrays.push_back(std::move(*inner));
      }
      return Array::of_arrays(std::move(arrays));
    }
    // Fixed-size elements: one bounded read of n * size bytes (checked above).
    const std::uint64_t bytes = n * min_bytes;
    if (Status s = need(bytes, {"the elements of", key}); !s) {
      return s.error();
    }
    std::vector<std::uint8_t> raw(static_cast<std::size_t>(bytes));
    if (Status s = read_bytes(raw.data(), raw.size(), {"the elements of", key}); !s) {
      return s.error();
    }
    if (*type == ValueType::boolean) {
      for (std::uint8_t& b : raw) {
        b = b != 0 ? 1 : 0;
      }
    }
    return Array::of_fixed(*type, std::move(raw));
  }

  Expected<Value> read_value(ValueType type, std::string_view key) {
    const Field what{"the value of", key};
    switch (type) {
      case ValueType::uint8:
        return read_uint<std::uint8_t>(type, what);
      case ValueType::uint16:
        return read_uint<std::uint16_t>(type, what);
      case ValueType::uint32:
        return read_uint<std::uint32_t>(type, what);
      case ValueType::uint64:
        return read_uint<std::uint64_t>(type, what);
      case ValueType::int8:
        return read_int<std::int8_t>(type, what);
      case ValueType::int16:
        return read_int<std::int16_t>(type, what);
      case ValueType::int32:
        return read_int<std::int32_t>(type, what);
      case ValueType::int64:
        return read_int<std::int64_t>(type, what);
      case ValueType::float32: {
        const auto v = read_number<float>(what);
        return v ? Expected<Value>(Value::of_float(type, *v)) : Expected<Value>(v.error());
      }
      case ValueType::float64: {
        const auto v = read_number<double>(what);
        return v ? Expected<Value>(Value::of_float(type, *v)) : Expected<Value>(v.error());
      }
      case ValueType::boolean: {
        const auto v = read_number<std::uint8_t>(what);
        return v ? Expected<Value>(Value::of_bool(*v != 0)) : Expected<Value>(v.error());
      }
      case ValueType::string: {
        auto v = read_string(what);
        return v ? Expected<Value>(Value::of_string(std::move(*v))) : Expected<Value>(v.error());
      }
      case ValueType::array: {
        auto v = read_array(key, 1);
        return v ? Expected<Value>(Value::of_array(std::move(*v))) : Expected<Value>(v.error());
      }
    }
    return fail(m_source.position(), "unreachable value type");
  }

  template <class T>
  Expected<Value> read_uint(ValueType type, const Field& what) {
    const auto v = read_number<T>(what);
    return v ? Expected<Value>(Value::of_uint(type, *v)) : Expected<Value>(v.error());
  }

  template <class T>
  Expected<Value> read_int(ValueType type, const Field& what) {
    const auto v = read_number<T>(what);
    return v ? Expected<Value>(Value::of_int(type, *v)) : Expected<Value>(v.error());
  }

  Status parse_metadata() {
    for (std::uint64_t i = 0; i < m_entry_count; ++i) {
      const std::uint64_t at = m_source.position();
      auto key = read_string({"metadata key", {}, i});
      if (!key) {
        return key.error();
      }
      if (key->empty()) {
        return fail(at, fmt::format("metadata key {} is empty; {}", i, kTruncatedFix));
      }
      if (key->size() > kMaxKeyLength) {
        return fail(at, fmt::format("metadata key {} is {} bytes long, over the GGUF "
                                    "limit of {}; {}",
                                    i, key->size(), kMaxKeyLength, kTruncatedFix));
      }
      if (const auto it = m_file.m_key_index.find(*key); it != m_file.m_key_index.end()) {
        return fail(at, fmt::format("duplicate key '{}' (first at offset {}); llama.cpp refuses "
                                    "such files, so the file is corrupt",
                                    *key, m_file.m_metadata[it->second].offset));
      }
      const auto type = read_type(*key, {"the type of", *key});
      if (!type) {
        return type.error();
      }
      auto value = read_value(*type, *key);
      if (!value) {
        return value.error();
      }
      if (Status s = charge(string_heap_bytes(key->size()), {"metadata key", *key}, at); !s) {
        return s.error();  // the index holds a copy of the key
      }
      m_file.m_key_index.emplace(*key, m_file.m_metadata.size());
      m_file.m_metadata.push_back(MetadataEntry{std::move(*key), std::move(*value), at});
    }

    if (const MetadataEntry* entry = m_file.find("general.alignment")) {
      if (entry->value.type() != ValueType::uint32) {
        return fail(entry->offset,
                    fmt::format("general.alignment is a {}, but llama.cpp requires a uint32",
                                value_type_name(entry->value.type())));
      }
      const std::uint64_t alignment = *entry->value.as_uint();
      if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        return fail(entry->offset, fmt::format("general.alignment {} is not a power of two; {}",
                                               alignment, kTruncatedFix));
      }
      m_file.m_alignment = static_cast<std::uint32_t>(alignment);
    }
    return {};
  }

  Status parse_tensor_infos() {
    for (std::uint64_t i = 0; i < m_tensor_count; ++i) {
      TensorInfo info;
      info.info_offset = m_source.position();
      auto name = read_string({"the name of tensor", {}, i});
      if (!name) {
        return name.error();
      }
      if (name->size() > kMaxTensorNameLength) {
        return fail(info.info_offset,
                    fmt::format("tensor {} has a {}-byte name, longer than the {} bytes "
                                "llama.cpp accepts",
                                i, name->size(), kMaxTensorNameLength));
      }
      if (const auto it = m_file.m_tensor_index.find(*name); it != m_file.m_tensor_index.end()) {
        return fail(info.info_offset,
                    fmt::format("duplicate tensor name '{}' (first at offset {}); llama.cpp "
                                "refuses such files, so the file is corrupt",
                                *name, m_file.m_tensors[it->second].info_offset));
      }
      info.name = std::move(*name);

      const std::uint64_t dims_at = m_source.position();
      const auto n_dims = read_number<std::uint32_t>({"the rank of", info.name});
      if (!n_dims) {
        return n_dims.error();
      }
      if (*n_dims > 4) {
        return fail(dims_at, fmt::format("tensor '{}' has {} dimensions; ggml supports at most 4",
                                         info.name, *n_dims));
      }
      info.n_dims = *n_dims;
      std::uint64_t elements = 1;
      bool overflow = false;
      for (std::uint32_t d = 0; d < info.n_dims; ++d) {
        const std::uint64_t dim_at = m_source.position();
        const auto dim = read_number<std::uint64_t>({"the shape of", info.name});
        if (!dim) {
          return dim.error();
        }
        if (*dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          return fail(dim_at, fmt::format("tensor '{}' dimension {} is {}, negative as ggml's "
                                          "int64; {}",
                                          info.name, d, *dim, kTruncatedFix));
        }
        info.shape[d] = *dim;
        overflow = overflow || __builtin_mul_overflow(elements, *dim, &elements);
      }
      if (overflow ||
          elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return fail(dims_at,
                    fmt::format("tensor '{}' has shape [{}, {}, {}, {}], whose element count "
                                "overflows int64; {}",
                                info.name, info.shape[0], info.shape[1], info.shape[2],
                                info.shape[3], kTruncatedFix));
      }
      info.elements = elements;

      const std::uint64_t type_at = m_source.position();
      const auto type_id = read_number<std::uint32_t>({"the type of", info.name});
      if (!type_id) {
        return type_id.error();
      }
      const GgmlTypeInfo* type = ggml_type_from_id(*type_id);
      if (type == nullptr) {
        const std::string_view removed = removed_ggml_type_name(*type_id);
        if (!removed.empty()) {
          return fail(type_at, fmt::format("tensor '{}' uses ggml type {} ({}), which ggml "
                                           "removed; quantize the model again with a current "
                                           "llama.cpp",
                                           info.name, *type_id, removed));
        }
        return fail(type_at, fmt::format("tensor '{}' has unknown ggml type {}; the file is "
                                         "corrupt or needs a newer gb10tune",
                                         info.name, *type_id));
      }
      info.type = type->type;
      if (info.shape[0] % type->block_size != 0) {
        return fail(type_at, fmt::format("tensor '{}' of type {} has rows of {} elements, not a "
                                         "multiple of the block size {}; {}",
                                         info.name, type->name, info.shape[0], type->block_size,
                                         kTruncatedFix));
      }
      const auto bytes = ggml_bytes(info.type, info.elements);
      if (!bytes) {
        return fail(type_at, fmt::format("tensor '{}' of type {} has a size in bytes that "
                                         "overflows 64 bits; {}",
                                         info.name, type->name, kTruncatedFix));
      }
      info.bytes = *bytes;

      const auto offset = read_number<std::uint64_t>({"the offset of", info.name});
      if (!offset) {
        return offset.error();
      }
      info.offset = *offset;
      if (Status s = charge(string_heap_bytes(info.name.size()), {"the name of", info.name},
                            info.info_offset);
          !s) {
        return s.error();  // the index holds a copy of the name
      }
      m_file.m_tensor_index.emplace(info.name, m_file.m_tensors.size());
      m_file.m_tensors.push_back(std::move(info));
    }
    return {};
  }

  Status check_data_section() {
    const std::uint64_t alignment = m_file.m_alignment;
    std::uint64_t data_offset = m_source.position();
    if (!m_file.m_tensors.empty()) {
      data_offset = align_up(data_offset, alignment);
      if (data_offset > m_source.size()) {
        return fail(m_source.position(),
                    fmt::format("the data section should start at offset {}, past the end of "
                                "the file (size {}); {}",
                                data_offset, m_source.size(), kTruncatedFix));
      }
    }
    m_file.m_data_offset = data_offset;

    std::uint64_t expected = 0;
    for (const TensorInfo& info : m_file.m_tensors) {
      if (info.offset % alignment != 0) {
        return fail(info.info_offset,
                    fmt::format("tensor '{}' has data offset {}, not a multiple of the "
                                "alignment {}; {}",
                                info.name, info.offset, alignment, kTruncatedFix));
      }
      if (info.offset != expected) {
        return fail(info.info_offset,
                    fmt::format("tensor '{}' has data offset {} but {} was expected: llama.cpp "
                                "requires tensors stored in order, each padded to {} bytes; {}",
                                info.name, info.offset, expected, alignment, kTruncatedFix));
      }
      std::uint64_t end = 0;
      if (__builtin_add_overflow(data_offset, info.offset, &end) ||
          __builtin_add_overflow(end, info.bytes, &end) || end > m_source.size()) {
        return fail(info.info_offset,
                    fmt::format("tensor '{}' ({} bytes at data offset {}) runs past the end of "
                                "the file (size {}): the file is truncated; download it again",
                                info.name, info.bytes, info.offset, m_source.size()));
      }
      std::uint64_t padded = align_up(info.bytes, alignment);
      if (padded < info.bytes || __builtin_add_overflow(expected, padded, &expected)) {
        return fail(info.info_offset, fmt::format("tensor '{}' size overflows the data section; {}",
                                                  info.name, kTruncatedFix));
      }
    }
    m_file.m_data_size = expected;
    return {};
  }

  detail::ByteSource& m_source;
  GgufFile m_file;
  std::uint64_t m_tensor_count = 0;
  std::uint64_t m_entry_count = 0;
};

Expected<GgufFile> parse_gguf(std::span<const std::uint8_t> bytes, std::string_view name) {
  detail::ByteSource source(bytes);
  return GgufParser(source, std::string(name)).parse();
}

Expected<GgufFile> read_gguf(const std::filesystem::path& path) {
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
  return GgufParser(source, path.string()).parse();
}

}  // namespace gb10tune::gguf
