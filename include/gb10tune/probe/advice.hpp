// One piece of advice, tied to the fact (K1–K19 of DESIGN.md) it comes from.
#pragma once

#include <string>
#include <string_view>

namespace gb10tune::probe {

enum class Severity {
  ok,              // checked, nothing to do
  info,            // a fact or a recommendation to follow
  warn,            // something on this machine works against llama.cpp's fast path
  not_applicable,  // the fact does not apply to this machine (said so, never applied blindly)
};

struct Advice {
  std::string id;    // stable id: "build-line", "unified-memory-env", …
  std::string fact;  // "K11"
  Severity severity = Severity::info;
  std::string title;    // one line
  std::string detail;   // the evidence and the fix, a few sentences
  std::string command;  // a command to run, when the advice is one ("" otherwise)
};

// "ok", "info", "warn", "not-applicable" (stable JSON ids).
std::string_view to_string(Severity severity);

}  // namespace gb10tune::probe
