#include "support/gguf_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace gb10tune::testing {

namespace {

template <class T>
std::string le(T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

template <class T>
GgufValueBytes scalar(gguf::ValueType type, T value) {
  return {static_cast<std::uint32_t>(type), le(value)};
}

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

std::string le32(std::uint32_t value) {
  return le(value);
}

std::string le64(std::uint64_t value) {
  return le(value);
}

GgufValueBytes gguf_uint8(std::uint8_t value) {
  return scalar(gguf::ValueType::uint8, value);
}
GgufValueBytes gguf_int8(std::int8_t value) {
  return scalar(gguf::ValueType::int8, value);
}
GgufValueBytes gguf_uint16(std::uint16_t value) {
  return scalar(gguf::ValueType::uint16, value);
}
GgufValueBytes gguf_int16(std::int16_t value) {
  return scalar(gguf::ValueType::int16, value);
}
GgufValueBytes gguf_uint32(std::uint32_t value) {
  return scalar(gguf::ValueType::uint32, value);
}
GgufValueBytes gguf_int32(std::int32_t value) {
  return scalar(gguf::ValueType::int32, value);
}
GgufValueBytes gguf_uint64(std::uint64_t value) {
  return scalar(gguf::ValueType::uint64, value);
}
GgufValueBytes gguf_int64(std::int64_t value) {
  return scalar(gguf::ValueType::int64, value);
}
GgufValueBytes gguf_float32(float value) {
  return scalar(gguf::ValueType::float32, value);
}
GgufValueBytes gguf_float64(double value) {
  return scalar(gguf::ValueType::float64, value);
}
GgufValueBytes gguf_bool(bool value) {
  return scalar(gguf::ValueType::boolean, static_cast<std::uint8_t>(value ? 1 : 0));
}
GgufValueBytes gguf_string(std::string_view value) {
  return {static_cast<std::uint32_t>(gguf::ValueType::string),
          le64(value.size()) + std::string(value)};
}

GgufValueBytes gguf_array(gguf::ValueType element, const std::vector<GgufValueBytes>& items) {
  std::string payload = le32(static_cast<std::uint32_t>(element)) + le64(items.size());
  for (const GgufValueBytes& item : items) {
    payload += item.payload;
  }
  return {static_cast<std::uint32_t>(gguf::ValueType::array), std::move(payload)};
}

GgufValueBytes gguf_uint32_array(const std::vector<std::uint32_t>& values) {
  std::vector<GgufValueBytes> items;
  for (const std::uint32_t v : values) {
    items.push_back(gguf_uint32(v));
  }
  return gguf_array(gguf::ValueType::uint32, items);
}

GgufValueBytes gguf_int32_array(const std::vector<std::int32_t>& values) {
  std::vector<GgufValueBytes> items;
  for (const std::int32_t v : values) {
    items.push_back(gguf_int32(v));
  }
  return gguf_array(gguf::ValueType::int32, items);
}

GgufValueBytes gguf_bool_array(const std::vector<bool>& values) {
  std::vector<GgufValueBytes> items;
  for (const bool v : values) {
    items.push_back(gguf_bool(v));
  }
  return gguf_array(gguf::ValueType::boolean, items);
}

GgufValueBytes gguf_string_array(const std::vector<std::string>& values) {
  std::vector<GgufValueBytes> items;
  for (const std::string& v : values) {
    items.push_back(gguf_string(v));
  }
  return gguf_array(gguf::ValueType::string, items);
}

GgufValueBytes gguf_raw(std::uint32_t type, std::string payload) {
  return {type, std::move(payload)};
}

std::uint64_t gguf_tensor_bytes(std::uint32_t type, const std::vector<std::uint64_t>& shape) {
  const gguf::GgmlTypeInfo* info = gguf::ggml_type_from_id(type);
  if (info == nullptr) {
    return 0;
  }
  std::uint64_t elements = 1;
  for (const std::uint64_t dim : shape) {
    if (__builtin_mul_overflow(elements, dim, &elements)) {
      return 0;
    }
  }
  return gguf::ggml_bytes(info->type, elements).value_or(0);
}

GgufWriter& GgufWriter::add(std::string_view key, GgufValueBytes value) {
  m_metadata.emplace_back(std::string(key), std::move(value));
  return *this;
}

GgufWriter& GgufWriter::alignment(std::uint32_t alignment) {
  m_alignment = alignment;
  return add("general.alignment", gguf_uint32(alignment));
}

GgufWriter& GgufWriter::tensor(std::string name, std::vector<std::uint64_t> shape,
                               std::uint32_t type, std::optional<std::uint64_t> offset) {
  m_tensors.push_back(Tensor{std::move(name), std::move(shape), type, offset});
  return *this;
}

GgufWriter& GgufWriter::tensor(std::string name, std::vector<std::uint64_t> shape,
                               gguf::GgmlType type, std::optional<std::uint64_t> offset) {
  return tensor(std::move(name), std::move(shape), static_cast<std::uint32_t>(type), offset);
}

GgufWriter& GgufWriter::magic(std::string four_bytes) {
  m_magic = std::move(four_bytes);
  return *this;
}

GgufWriter& GgufWriter::tensor_count(std::uint64_t count) {
  m_tensor_count = count;
  return *this;
}

GgufWriter& GgufWriter::metadata_count(std::uint64_t count) {
  m_metadata_count = count;
  return *this;
}

GgufLayout GgufWriter::layout() const {
  GgufLayout layout;
  std::string& out = layout.header;
  out += m_magic;
  out += le32(m_version);
  out += le64(m_tensor_count.value_or(m_tensors.size()));
  out += le64(m_metadata_count.value_or(m_metadata.size()));
  for (const auto& [key, value] : m_metadata) {
    layout.key_offsets.emplace(key, out.size());
    out += le64(key.size()) + key + le32(value.type) + value.payload;
  }
  const std::uint64_t alignment = m_alignment == 0 ? 1 : m_alignment;
  std::uint64_t next = 0;
  for (const Tensor& t : m_tensors) {
    layout.tensor_offsets.emplace(t.name, out.size());
    out += le64(t.name.size()) + t.name + le32(static_cast<std::uint32_t>(t.shape.size()));
    for (const std::uint64_t dim : t.shape) {
      out += le64(dim);
    }
    const std::uint64_t offset = t.offset.value_or(next);
    out += le32(t.type) + le64(offset);
    next = align_up(offset + gguf_tensor_bytes(t.type, t.shape), alignment);
  }
  if (!m_tensors.empty()) {
    out.resize(align_up(out.size(), alignment), '\0');
  }
  layout.data_offset = out.size();
  layout.data_size = next;
  return layout;
}

std::string GgufWriter::bytes() const {
  const GgufLayout l = layout();
  std::string out = l.header;
  out.resize(l.file_size(), '\0');
  return out;
}

std::uint64_t GgufWriter::write(const std::filesystem::path& path) const {
  const GgufLayout l = layout();
  write_bytes(path, l.header);
  if (::truncate(path.c_str(), static_cast<off_t>(l.file_size())) != 0) {
    throw std::runtime_error("truncate failed for " + path.string());
  }
  return l.file_size();
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    throw std::runtime_error("cannot write " + path.string());
  }
}

void patch_u64(std::string& bytes, std::uint64_t offset, std::uint64_t value) {
  bytes.replace(offset, 8, le64(value));
}

void patch_u32(std::string& bytes, std::uint64_t offset, std::uint32_t value) {
  bytes.replace(offset, 4, le32(value));
}

}  // namespace gb10tune::testing
