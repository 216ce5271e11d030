// `gb10tune verify` results as a checklist (✔ ⚠ ✘, one line of evidence each) or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/render/document.hpp"
#include "gb10tune/verify/verify.hpp"

namespace gb10tune::render {

// One finding as verify's JSON writes it: id, fact, severity, summary, evidence, fix.
nlohmann::json finding_to_json(const server::Finding& finding);

// The result as the verify JSON document (schema_version, one entry per server, notes,
// "verdict" and "exit_code" as `strict` makes them).
nlohmann::json verify_to_json(const verify::VerifyResult& result, bool strict);

// The checklist: per server a header, per finding a mark and one line of evidence, the fix
// under failures and warnings, and a last line with the verdict.
std::string render_verify_text(const verify::VerifyResult& result, bool strict,
                               const TextStyle& style);

// 0 when nothing fails (and, with `strict`, nothing warns), else 1.
int verify_exit_code(const verify::VerifyResult& result, bool strict);

}  // namespace gb10tune::render
