#include "gb10tune/render/verify_render.hpp"

#include <fmt/format.h>

namespace gb10tune::render {

namespace {

using server::Finding;
using server::Severity;

std::string mark(Severity severity, const TextStyle& style) {
  switch (severity) {
    case Severity::ok:
      return style.green("✔");
    case Severity::warn:
      return style.yellow("⚠");
    case Severity::fail:
      return style.red("✘");
    case Severity::not_applicable:
      return style.dim("–");
  }
  return "?";
}

void render_finding(const Finding& finding, const TextStyle& style, std::string& out) {
  const std::string fact = finding.fact.empty() ? "" : style.dim(" [" + finding.fact + "]");
  out += fmt::format("  {} {}{}: {}\n", mark(finding.severity, style), finding.summary, fact,
                     finding.evidence);
  if ((finding.severity == Severity::warn || finding.severity == Severity::fail) &&
      !finding.fix.empty()) {
    out += fmt::format("      fix: {}\n", finding.fix);
  }
}

struct Counts {
  int ok = 0;
  int warn = 0;
  int fail = 0;
  int not_applicable = 0;
  void add(Severity severity) {
    switch (severity) {
      case Severity::ok:
        ++ok;
        break;
      case Severity::warn:
        ++warn;
        break;
      case Severity::fail:
        ++fail;
        break;
      case Severity::not_applicable:
        ++not_applicable;
        break;
    }
  }
};

}  // namespace

nlohmann::json finding_to_json(const Finding& finding) {
  nlohmann::json doc = {{"id", finding.id},
                        {"fact", finding.fact},
                        {"severity", server::severity_name(finding.severity)},
                        {"summary", finding.summary},
                        {"evidence", finding.evidence},
                        {"fix", finding.fix}};
  if (!finding.measured.empty()) {
    doc["measured"] = finding.measured;  // the tune's citation that outranks the rule
  }
  return doc;
}

int verify_exit_code(const verify::VerifyResult& result, bool strict) {
  const Severity worst = result.worst();
  return worst == Severity::fail || (strict && worst == Severity::warn) ? 1 : 0;
}

nlohmann::json verify_to_json(const verify::VerifyResult& result, bool strict) {
  nlohmann::json doc = make_document("verify");
  doc["strict"] = strict;
  doc["verdict"] = server::severity_name(result.worst());
  doc["exit_code"] = verify_exit_code(result, strict);
  doc["error"] =
      result.no_server.empty() ? nlohmann::json(nullptr) : nlohmann::json(result.no_server);
  nlohmann::json notes = nlohmann::json::array();
  for (const Finding& note : result.notes) {
    notes.push_back(finding_to_json(note));
  }
  doc["notes"] = std::move(notes);
  nlohmann::json servers = nlohmann::json::array();
  for (const verify::ServerReport& server : result.servers) {
    nlohmann::json checks = nlohmann::json::array();
    for (const verify::CheckGroup& group : server.groups) {
      for (const Finding& finding : group.findings) {
        nlohmann::json entry = finding_to_json(finding);
        entry["group"] = group.name;
        checks.push_back(std::move(entry));
      }
    }
    servers.push_back({{"pid", server.pid},
                       {"exe", server.exe},
                       {"found_by", server.found_by},
                       {"url", server.url},
                       {"verdict", server::severity_name(server.worst())},
                       {"checks", std::move(checks)}});
  }
  doc["servers"] = std::move(servers);
  return doc;
}

std::string render_verify_text(const verify::VerifyResult& result, bool strict,
                               const TextStyle& style) {
  std::string out;
  Counts counts;
  for (const verify::ServerReport& server : result.servers) {
    out += style.bold(fmt::format("llama-server pid {}", server.pid));
    out += fmt::format("  {} (found by {}{})\n", server.exe.empty() ? "?" : server.exe,
                       server.found_by, server.url.empty() ? "" : ", " + server.url);
    for (const verify::CheckGroup& group : server.groups) {
      out += fmt::format(" {}\n", group.name);
      for (const Finding& finding : group.findings) {
        render_finding(finding, style, out);
        counts.add(finding.severity);
      }
    }
    out += "\n";
  }
  if (!result.notes.empty()) {
    out += " other processes and files\n";
    for (const Finding& note : result.notes) {
      render_finding(note, style, out);
      counts.add(note.severity);
    }
    out += "\n";
  }
  if (!result.no_server.empty()) {
    out += fmt::format("{} {}\n", mark(Severity::fail, style), result.no_server);
  }
  const int code = verify_exit_code(result, strict);
  const std::string verdict = code == 0 ? style.green("PASS") : style.red("FAIL");
  out += fmt::format(
      "verify: {} — {} server{} checked: {} ok, {}{} warning{}, {} failed{}\n", verdict,
      result.servers.size(), result.servers.size() == 1 ? "" : "s", counts.ok,
      counts.not_applicable > 0 ? fmt::format("{} not applicable, ", counts.not_applicable)
                                : std::string(),
      counts.warn, counts.warn == 1 ? "" : "s", counts.fail,
      strict && counts.warn > 0 ? " (--strict: warnings fail)" : "");
  return out;
}

}  // namespace gb10tune::render
