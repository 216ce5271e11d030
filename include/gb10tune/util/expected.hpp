// A small value-or-error result for expected failures (bad input, missing files).
// Exceptions are reserved for bugs; anything a user can cause travels as an Error.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "gb10tune/util/exit_code.hpp"

namespace gb10tune {

// What went wrong, written for the user: names the thing and, where possible, the fix.
struct Error {
  std::string message;
  ExitCode code = ExitCode::failed;  // what the process should exit with if this ends it
};

// Holds either a T or an Error. Dereferencing an Expected that holds an Error is a bug.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : m_state(std::in_place_index<1>, std::move(error)) {}

  bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(m_state); }
  const T& value() const& { return std::get<0>(m_state); }
  T&& value() && { return std::get<0>(std::move(m_state)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(m_state); }

  // The value, or `fallback` when this holds an Error.
  T value_or(T fallback) const { return has_value() ? value() : std::move(fallback); }

 private:
  std::variant<T, Error> m_state;
};

// Success or an Error, for operations that return nothing.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : m_error(std::move(error)), m_failed(true) {}

  bool ok() const { return !m_failed; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return m_error; }

 private:
  Error m_error;
  bool m_failed = false;
};

// first_error of no results: nothing failed.
inline std::optional<Error> first_error() {
  return std::nullopt;
}

// The Error of the first of the results (Expected values or Statuses, left to right) that
// failed, copied; empty when every one succeeded. It lets a run of independent reads stop at
// the first failure with one check instead of one per read:
//
//   const auto width = read_width();
//   const auto height = read_height();
//   if (const auto failed = first_error(width, height)) {
//     return *failed;
//   }
//
// Every result is computed before the check, so use it only for reads without side effects
// whose order does not matter; a read that needs an earlier value still checks that value
// first with its own `if (!x) { return x.error(); }`.
template <class Result, class... Rest>
std::optional<Error> first_error(const Result& result, const Rest&... results) {
  if (!result) {
    return result.error();
  }
  return first_error(results...);
}

}  // namespace gb10tune
