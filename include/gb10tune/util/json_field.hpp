// Reading one typed field of a JSON object, for documents gb10tune writes and reads back.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

namespace gb10tune {

// Reads field `name` of `doc` into `target`; false with `error` set ("field 'x' is missing",
// "… has the wrong type (string)") when `doc` is not an object or the field is absent or
// mistyped.
template <class T>
bool get_field(const nlohmann::json& doc, const char* name, T& target, std::string& error) {
  if (!doc.is_object()) {
    error = fmt::format("an object was expected where '{}' should be", name);
    return false;
  }
  const auto it = doc.find(name);
  if (it == doc.end()) {
    error = fmt::format("field '{}' is missing", name);
    return false;
  }
  try {
    target = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    error = fmt::format("field '{}' has the wrong type ({})", name, it->type_name());
    return false;
  }
  return true;
}

}  // namespace gb10tune
