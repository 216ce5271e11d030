// The GGUF parser's key-value pairs: types, arrays (nested to a bounded depth) and values, each
// checked and charged before it is read.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "gguf_parser.hpp"

namespace gb10tune::gguf {

using namespace parsing;

Expected<ValueType> GgufParser::read_type(std::string_view key, const Field& what) {
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

Expected<Array> GgufParser::read_array(std::string_view key, int depth) {
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
    return fail(count_at, fmt::format("key '{}' is an array of {} {} elements, which would "
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

Expected<Value> GgufParser::read_value(ValueType type, std::string_view key) {
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
Expected<Value> GgufParser::read_uint(ValueType type, const Field& what) {
  const auto v = read_number<T>(what);
  return v ? Expected<Value>(Value::of_uint(type, *v)) : Expected<Value>(v.error());
}

template <class T>
Expected<Value> GgufParser::read_int(ValueType type, const Field& what) {
  const auto v = read_number<T>(what);
  return v ? Expected<Value>(Value::of_int(type, *v)) : Expected<Value>(v.error());
}

Status GgufParser::parse_metadata() {
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

}  // namespace gb10tune::gguf
