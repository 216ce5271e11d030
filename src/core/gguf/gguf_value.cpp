#include "gb10tune/gguf/gguf_value.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <limits>

namespace gb10tune::gguf {

static_assert(std::endian::native == std::endian::little,
              "GGUF numbers are little-endian; a big-endian host would need byte swapping");

namespace {

bool is_unsigned_type(ValueType type) {
  return type == ValueType::uint8 || type == ValueType::uint16 || type == ValueType::uint32 ||
         type == ValueType::uint64;
}

template <class T>
T load(const std::uint8_t* bytes) {
  T value{};
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

}  // namespace

bool is_value_type(std::uint32_t id) {
  return id <= static_cast<std::uint32_t>(ValueType::float64);
}

std::string_view value_type_name(ValueType type) {
  switch (type) {
    case ValueType::uint8:
      return "uint8";
    case ValueType::int8:
      return "int8";
    case ValueType::uint16:
      return "uint16";
    case ValueType::int16:
      return "int16";
    case ValueType::uint32:
      return "uint32";
    case ValueType::int32:
      return "int32";
    case ValueType::float32:
      return "float32";
    case ValueType::boolean:
      return "bool";
    case ValueType::string:
      return "string";
    case ValueType::array:
      return "array";
    case ValueType::uint64:
      return "uint64";
    case ValueType::int64:
      return "int64";
    case ValueType::float64:
      return "float64";
  }
  return "unknown";
}

std::size_t fixed_value_size(ValueType type) {
  switch (type) {
    case ValueType::uint8:
    case ValueType::int8:
    case ValueType::boolean:
      return 1;
    case ValueType::uint16:
    case ValueType::int16:
      return 2;
    case ValueType::uint32:
    case ValueType::int32:
    case ValueType::float32:
      return 4;
    case ValueType::uint64:
    case ValueType::int64:
    case ValueType::float64:
      return 8;
    case ValueType::string:
    case ValueType::array:
      return 0;
  }
  return 0;
}

bool is_integer_type(ValueType type) {
  switch (type) {
    case ValueType::uint8:
    case ValueType::int8:
    case ValueType::uint16:
    case ValueType::int16:
    case ValueType::uint32:
    case ValueType::int32:
    case ValueType::uint64:
    case ValueType::int64:
      return true;
    default:
      return false;
  }
}

// --- Array ---------------------------------------------------------------------------------

Array Array::of_fixed(ValueType type, std::vector<std::uint8_t> raw) {
  Array array;
  array.m_element_type = type;
  array.m_size = raw.size() / fixed_value_size(type);
  array.m_raw = std::move(raw);
  return array;
}

Array Array::of_strings(std::vector<std::string> strings) {
  Array array;
  array.m_element_type = ValueType::string;
  array.m_size = strings.size();
  array.m_strings = std::move(strings);
  return array;
}

Array Array::of_arrays(std::vector<Array> arrays) {
  Array array;
  array.m_element_type = ValueType::array;
  array.m_size = arrays.size();
  array.m_arrays = std::move(arrays);
  return array;
}

std::optional<std::int64_t> Array::int_at(std::uint64_t i) const {
  if (i >= m_size) {
    return std::nullopt;
  }
  const std::uint8_t* at = m_raw.data() + i * fixed_value_size(m_element_type);
  switch (m_element_type) {
    case ValueType::uint8:
    case ValueType::boolean:
      return load<std::uint8_t>(at);
    case ValueType::int8:
      return load<std::int8_t>(at);
    case ValueType::uint16:
      return load<std::uint16_t>(at);
    case ValueType::int16:
      return load<std::int16_t>(at);
    case ValueType::uint32:
      return load<std::uint32_t>(at);
    case ValueType::int32:
      return load<std::int32_t>(at);
    case ValueType::int64:
      return load<std::int64_t>(at);
    case ValueType::uint64: {
      const auto value = load<std::uint64_t>(at);
      if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return std::nullopt;
      }
      return static_cast<std::int64_t>(value);
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::uint64_t> Array::uint_at(std::uint64_t i) const {
  if (m_element_type == ValueType::uint64 && i < m_size) {
    return load<std::uint64_t>(m_raw.data() + i * 8);
  }
  const auto value = int_at(i);
  if (!value || *value < 0) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(*value);
}

std::optional<double> Array::float_at(std::uint64_t i) const {
  if (i >= m_size) {
    return std::nullopt;
  }
  if (m_element_type == ValueType::float32) {
    return load<float>(m_raw.data() + i * 4);
  }
  if (m_element_type == ValueType::float64) {
    return load<double>(m_raw.data() + i * 8);
  }
  return std::nullopt;
}

std::optional<bool> Array::bool_at(std::uint64_t i) const {
  if (i >= m_size || m_element_type != ValueType::boolean) {
    return std::nullopt;
  }
  return m_raw[i] != 0;
}

const std::string* Array::string_at(std::uint64_t i) const {
  if (i >= m_size || m_element_type != ValueType::string) {
    return nullptr;
  }
  return &m_strings[i];
}

const Array* Array::array_at(std::uint64_t i) const {
  if (i >= m_size || m_element_type != ValueType::array) {
    return nullptr;
  }
  return &m_arrays[i];
}

// --- Value ---------------------------------------------------------------------------------

Value Value::of_uint(ValueType type, std::uint64_t value) {
  Value result;
  result.m_type = type;
  result.m_data = value;
  return result;
}

Value Value::of_int(ValueType type, std::int64_t value) {
  Value result;
  result.m_type = type;
  result.m_data = value;
  return result;
}

Value Value::of_float(ValueType type, double value) {
  Value result;
  result.m_type = type;
  result.m_data = value;
  return result;
}

Value Value::of_bool(bool value) {
  Value result;
  result.m_type = ValueType::boolean;
  result.m_data = value;
  return result;
}

Value Value::of_string(std::string value) {
  Value result;
  result.m_type = ValueType::string;
  result.m_data = std::move(value);
  return result;
}

Value Value::of_array(Array value) {
  Value result;
  result.m_type = ValueType::array;
  result.m_data = std::move(value);
  return result;
}

std::optional<std::uint64_t> Value::as_uint() const {
  if (const auto* u = std::get_if<std::uint64_t>(&m_data)) {
    return *u;
  }
  if (const auto* i = std::get_if<std::int64_t>(&m_data); i != nullptr && *i >= 0) {
    return static_cast<std::uint64_t>(*i);
  }
  return std::nullopt;
}

std::optional<std::int64_t> Value::as_int() const {
  if (const auto* i = std::get_if<std::int64_t>(&m_data)) {
    return *i;
  }
  if (const auto* u = std::get_if<std::uint64_t>(&m_data);
      u != nullptr && *u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return static_cast<std::int64_t>(*u);
  }
  return std::nullopt;
}

std::optional<double> Value::as_float() const {
  if (const auto* f = std::get_if<double>(&m_data)) {
    return *f;
  }
  return std::nullopt;
}

std::optional<bool> Value::as_bool() const {
  if (const auto* b = std::get_if<bool>(&m_data)) {
    return *b;
  }
  return std::nullopt;
}

const std::string* Value::as_string() const {
  return std::get_if<std::string>(&m_data);
}

const Array* Value::as_array() const {
  return std::get_if<Array>(&m_data);
}

std::string Value::summary() const {
  if (const auto* s = as_string()) {
    constexpr std::size_t kMax = 40;
    return s->size() <= kMax ? fmt::format("\"{}\"", *s)
                             : fmt::format("\"{}…\" ({} bytes)", s->substr(0, kMax), s->size());
  }
  if (const auto* a = as_array()) {
    return fmt::format("[{} × {}]", a->size(), value_type_name(a->element_type()));
  }
  if (const auto b = as_bool()) {
    return *b ? "true" : "false";
  }
  if (const auto f = as_float()) {
    return fmt::format("{}", *f);
  }
  if (is_unsigned_type(m_type)) {
    return fmt::format("{}", std::get<std::uint64_t>(m_data));
  }
  return fmt::format("{}", std::get<std::int64_t>(m_data));
}

}  // namespace gb10tune::gguf
