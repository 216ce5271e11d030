#include "gb10tune/gguf/gguf_file.hpp"

#include <fmt/format.h>

namespace gb10tune::gguf {

const MetadataEntry* GgufFile::find(std::string_view key) const {
  const auto it = m_key_index.find(std::string(key));
  return it == m_key_index.end() ? nullptr : &m_metadata[it->second];
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = m_tensor_index.find(std::string(name));
  return it == m_tensor_index.end() ? nullptr : &m_tensors[it->second];
}

Error GgufFile::key_error(std::string_view key, std::string_view problem) const {
  const MetadataEntry* entry = find(key);
  if (entry == nullptr) {
    return Error{fmt::format("{}: key '{}' {}", m_source, key, problem)};
  }
  return Error{fmt::format("{}: offset {}: key '{}' {}", m_source, entry->offset, key, problem)};
}

Expected<const Value*> GgufFile::require(std::string_view key) const {
  const MetadataEntry* entry = find(key);
  if (entry == nullptr) {
    return key_error(key,
                     "is missing; the model was converted by a tool that left it out, or "
                     "it is not a model of this architecture");
  }
  return &entry->value;
}

namespace {

std::string type_problem(const Value& value, std::string_view expected) {
  return fmt::format("is a {} ({}), expected {}", value_type_name(value.type()), value.summary(),
                     expected);
}

}  // namespace

Expected<std::uint64_t> GgufFile::get_uint(std::string_view key) const {
  const auto value = require(key);
  if (!value) {
    return value.error();
  }
  if (const auto result = (*value)->as_uint()) {
    return *result;
  }
  return key_error(key, type_problem(**value, "an unsigned integer"));
}

Expected<std::int64_t> GgufFile::get_int(std::string_view key) const {
  const auto value = require(key);
  if (!value) {
    return value.error();
  }
  if (const auto result = (*value)->as_int()) {
    return *result;
  }
  return key_error(key, type_problem(**value, "an integer"));
}

Expected<double> GgufFile::get_float(std::string_view key) const {
  const auto value = require(key);
  if (!value) {
    return value.error();
  }
  if (const auto result = (*value)->as_float()) {
    return *result;
  }
  return key_error(key, type_problem(**value, "a float32 or float64"));
}

Expected<std::string> GgufFile::get_string(std::string_view key) const {
  const auto value = require(key);
  if (!value) {
    return value.error();
  }
  if (const std::string* result = (*value)->as_string()) {
    return *result;
  }
  return key_error(key, type_problem(**value, "a string"));
}

Expected<bool> GgufFile::get_bool(std::string_view key) const {
  const auto value = require(key);
  if (!value) {
    return value.error();
  }
  if (const auto result = (*value)->as_bool()) {
    return *result;
  }
  return key_error(key, type_problem(**value, "a bool"));
}

Expected<const Array*> GgufFile::get_array(std::string_view key) const {
  const auto value = require(key);
  if (!value) {
    return value.error();
  }
  if (const Array* result = (*value)->as_array()) {
    return result;
  }
  return key_error(key, type_problem(**value, "an array"));
}

Expected<std::uint64_t> GgufFile::get_uint_or(std::string_view key, std::uint64_t fallback) const {
  return has(key) ? get_uint(key) : Expected<std::uint64_t>(fallback);
}

Expected<std::string> GgufFile::get_string_or(std::string_view key, std::string fallback) const {
  return has(key) ? get_string(key) : Expected<std::string>(std::move(fallback));
}

Expected<std::vector<std::uint64_t>> GgufFile::get_uint_per_layer(std::string_view key,
                                                                  std::size_t n) const {
  const auto value = require(key);
  if (!value) {
    return value.error();
  }
  const Array* array = (*value)->as_array();
  if (array == nullptr) {
    std::optional<std::uint64_t> scalar = (*value)->as_uint();
    if (const auto flag = (*value)->as_bool()) {
      scalar = *flag ? 1 : 0;
    }
    if (!scalar) {
      return key_error(key, type_problem(**value, "an unsigned integer or an array of them"));
    }
    return std::vector<std::uint64_t>(n, *scalar);
  }
  if (!is_integer_type(array->element_type()) && array->element_type() != ValueType::boolean) {
    return key_error(key, fmt::format("is an array of {}, expected integers or bools (one per "
                                      "layer)",
                                      value_type_name(array->element_type())));
  }
  if (array->size() != n) {
    return key_error(key, fmt::format("has {} elements, expected one per layer ({}); the model "
                                      "file is inconsistent",
                                      array->size(), n));
  }
  std::vector<std::uint64_t> values;
  values.reserve(n);
  for (std::uint64_t i = 0; i < array->size(); ++i) {
    const auto element = array->uint_at(i);
    if (!element) {
      return key_error(key, fmt::format("element {} is negative", i));
    }
    values.push_back(*element);
  }
  return values;
}

std::uint64_t GgufFile::tensor_bytes() const {
  std::uint64_t total = 0;
  for (const TensorInfo& info : m_tensors) {
    total += info.bytes;  // cannot overflow: every tensor lies inside the file
  }
  return total;
}

std::uint64_t GgufFile::tensor_elements() const {
  std::uint64_t total = 0;
  for (const TensorInfo& info : m_tensors) {
    total += info.elements;  // < 2^63 each; a sum this large would need an absurd file
  }
  return total;
}

}  // namespace gb10tune::gguf
