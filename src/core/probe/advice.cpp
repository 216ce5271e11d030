#include "gb10tune/probe/advice.hpp"

namespace gb10tune::probe {

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::ok:
      return "ok";
    case Severity::info:
      return "info";
    case Severity::warn:
      return "warn";
    case Severity::not_applicable:
      return "not-applicable";
  }
  return "info";
}

}  // namespace gb10tune::probe
