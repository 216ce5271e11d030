// GGUF metadata values: the 13 value types of the GGUF format (v2/v3), scalars, strings and
// arrays (arrays may nest). Values are immutable once read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gb10tune::gguf {

// The value type ids of the GGUF format (gguf.h `enum gguf_type`).
enum class ValueType : std::uint32_t {
  uint8 = 0,
  int8 = 1,
  uint16 = 2,
  int16 = 3,
  uint32 = 4,
  int32 = 5,
  float32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  uint64 = 10,
  int64 = 11,
  float64 = 12,
};

// True when `id` names one of the 13 value types.
bool is_value_type(std::uint32_t id);

// The GGUF name of a type: "uint32", "float32", "bool", "string", "array", …
std::string_view value_type_name(ValueType type);

// Bytes one value of a fixed-size type takes in the file; 0 for string and array.
std::size_t fixed_value_size(ValueType type);

// True for the integer types (signed or not); bool is not an integer.
bool is_integer_type(ValueType type);

// An array value: its element type and elements. Numbers and bools are kept packed as in the
// file (little-endian), so an array costs no more memory than its bytes on disk.
class Array {
 public:
  Array() = default;
  // An array of fixed-size elements from their raw little-endian bytes; `raw.size()` must be
  // a multiple of fixed_value_size(type) (a bug otherwise).
  static Array of_fixed(ValueType type, std::vector<std::uint8_t> raw);
  static Array of_strings(std::vector<std::string> strings);
  static Array of_arrays(std::vector<Array> arrays);

  ValueType element_type() const { return m_element_type; }
  std::uint64_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }

  // Element `i` as an unsigned integer: nullopt when out of range, not an integer or bool,
  // or negative.
  std::optional<std::uint64_t> uint_at(std::uint64_t i) const;
  // Element `i` as a signed integer: nullopt when out of range, not an integer or bool, or
  // above INT64_MAX.
  std::optional<std::int64_t> int_at(std::uint64_t i) const;
  // Element `i` of a float32/float64 array; nullopt otherwise.
  std::optional<double> float_at(std::uint64_t i) const;
  // Element `i` of a bool array; nullopt otherwise.
  std::optional<bool> bool_at(std::uint64_t i) const;
  // Element `i` of a string array; nullptr otherwise.
  const std::string* string_at(std::uint64_t i) const;
  // Element `i` of an array of arrays; nullptr otherwise.
  const Array* array_at(std::uint64_t i) const;

 private:
  ValueType m_element_type = ValueType::uint8;
  std::uint64_t m_size = 0;
  std::vector<std::uint8_t> m_raw;  // fixed-size elements
  std::vector<std::string> m_strings;
  std::vector<Array> m_arrays;
};

// One metadata value of any type.
class Value {
 public:
  Value() = default;
  // An unsigned integer of type uint8/16/32/64.
  static Value of_uint(ValueType type, std::uint64_t value);
  // A signed integer of type int8/16/32/64.
  static Value of_int(ValueType type, std::int64_t value);
  // A float32 or float64.
  static Value of_float(ValueType type, double value);
  static Value of_bool(bool value);
  static Value of_string(std::string value);
  static Value of_array(Array value);

  ValueType type() const { return m_type; }
  // The value as an unsigned integer: any integer type holding a value >= 0; nullopt for
  // other types and negative values.
  std::optional<std::uint64_t> as_uint() const;
  // The value as a signed integer: any integer type holding a value <= INT64_MAX.
  std::optional<std::int64_t> as_int() const;
  // A float32 or float64 value; nullopt for other types.
  std::optional<double> as_float() const;
  std::optional<bool> as_bool() const;
  const std::string* as_string() const;
  const Array* as_array() const;

  // A short rendering for messages: `42`, `"llama"`, `[64 × int32]`.
  std::string summary() const;

 private:
  ValueType m_type = ValueType::uint8;
  std::variant<std::uint64_t, std::int64_t, double, bool, std::string, Array> m_data;
};

}  // namespace gb10tune::gguf
