#include "gb10tune/render/launch_render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "gb10tune/render/plan_render.hpp"
#include "gb10tune/render/verify_render.hpp"
#include "gb10tune/util/shell_quote.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::render {

namespace {

using nlohmann::json;

std::string setting_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string model_line(const LaunchPreview& p) {
  const auto& m = *p.model;
  std::string line = fmt::format("{} — {}", p.model_files.front(), m.architecture);
  if (m.main_layer_count != 0) {
    line += fmt::format(", {} layers", m.main_layer_count);
  }
  if (m.has_mtp()) {
    line += " + MTP head";
  }
  if (m.is_moe()) {
    line += fmt::format(", {} experts ({} used)", m.expert_count, m.expert_used_count);
  }
  line += fmt::format(", {} of weights", format_bytes_si(m.weight_bytes));
  if (p.model_files.size() > 1) {
    line += fmt::format(", {} shards", p.model_files.size());
  }
  return line;
}

}  // namespace

std::vector<std::string> launch_warnings(const launch::ServerCommand& command,
                                         const launch::ChildEnvironment& environment,
                                         const launch::RuleVerdict& rules) {
  std::vector<std::string> out = command.warnings;
  out.insert(out.end(), environment.warnings.begin(), environment.warnings.end());
  const auto judged = rules.warnings();
  out.insert(out.end(), judged.begin(), judged.end());
  return out;
}

std::vector<std::string> launch_measured(const launch::RuleVerdict& rules) {
  std::vector<std::string> out;
  for (const launch::RuleJudgement& rule : rules.rules) {
    if (!rule.finding.measured.empty()) {
      out.push_back(fmt::format("{} [{}]: {}", rule.finding.summary, rule.finding.fact,
                                rule.finding.measured));
    }
  }
  return out;
}

json launch_to_json(const LaunchPreview& p) {
  json settings = json::object();
  for (const auto& [key, resolved] : p.settings->all()) {
    json overridden = json::array();
    for (const auto& [source, value] : resolved.overridden) {
      overridden.push_back({{"source", source}, {"value", value}});
    }
    settings[key] = {
        {"value", resolved.value}, {"source", resolved.source}, {"overridden", overridden}};
  }
  json pieces = json::array();
  for (const auto& piece : p.command->pieces) {
    const auto* rule = launch::find_launch_rule(piece.rule);
    pieces.push_back({{"args", piece.args},
                      {"rule", piece.rule},
                      {"fact", rule ? rule->fact : ""},
                      {"why", rule ? rule->why : ""}});
  }
  json changes = json::array();
  std::vector<std::string> removed;
  for (const auto& c : p.environment->changes) {
    changes.push_back({{"name", c.name},
                       {"value", c.value},
                       {"action", launch::change_action_name(c.action)},
                       {"reason", c.reason},
                       {"fact", c.fact}});
    if (c.action == launch::ChangeAction::removed) {
      removed.push_back(c.name);
    }
  }
  json rules = json::array();
  for (const launch::RuleJudgement& rule : p.rules->rules) {
    json entry = finding_to_json(rule.finding);
    entry["launch"] = launch::rule_action_name(rule.action);
    rules.push_back(std::move(entry));
  }
  json doc = plan_to_json(*p.model, *p.config, *p.plan);
  doc["model_files"] = p.model_files;
  doc["mmproj"] = p.mmproj_path.empty() ? json(nullptr) : json(p.mmproj_path);
  doc["server"] = p.server_path;
  doc["profile"] = {{"name", p.profile}, {"reason", p.profile_reason}};
  doc["settings"] = settings;
  doc["environment"] = {{"changes", changes}, {"removed", removed}};
  doc["command_line"] = {
      {"argv", p.command->argv}, {"shell", shell_join(p.command->argv)}, {"pieces", pieces}};
  doc["adaptations"] = p.command->adaptations;
  doc["context_capped"] =
      p.command->context_capped.empty() ? json(nullptr) : json(p.command->context_capped);
  doc["warnings"] = launch_warnings(*p.command, *p.environment, *p.rules);
  doc["rules"] = rules;
  if (p.fit != nullptr) {
    json given_up = json::array();
    for (std::size_t i = 0; i < p.fit->given_up.size(); ++i) {
      const plan::FitChange& c = p.fit->given_up[i];
      const bool mib = c.knob == plan::FitKnob::cache_ram;
      given_up.push_back(
          {{"setting", plan::fit_knob_key(c.knob)},
           {"asked", mib ? c.asked >> 20 : c.asked},
           {"chosen", mib ? c.chosen >> 20 : c.chosen},
           {"asked_from",
            i < p.fit->given_up_from.size() ? json(p.fit->given_up_from[i]) : json(nullptr)}});
    }
    doc["fit"] = {{"mode", p.fit->mode},
                  {"priority", p.fit->priority},
                  {"given_up", given_up},
                  {"failed", p.fit->failed.empty() ? json(nullptr) : json(p.fit->failed)}};
  } else {
    doc["fit"] = nullptr;
  }
  doc["rpc"] = p.rpc != nullptr ? rpc_to_json(*p.rpc) : json(nullptr);
  return doc;
}

std::vector<std::string> describe_fit_changes(const FitSummary& fit) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < fit.given_up.size(); ++i) {
    const plan::FitChange& c = fit.given_up[i];
    const std::string from =
        i < fit.given_up_from.size() ? fmt::format(" (was from {})", fit.given_up_from[i]) : "";
    if (c.knob == plan::FitKnob::cache_ram) {
      out.push_back(fmt::format("{} {} → {}{}", plan::fit_knob_key(c.knob), c.asked >> 20,
                                c.chosen >> 20, from));
    } else {
      out.push_back(
          fmt::format("{} {} → {}{}", plan::fit_knob_key(c.knob), c.asked, c.chosen, from));
    }
  }
  return out;
}

std::string render_launch_text(const LaunchPreview& p, const TextStyle& style, bool explain) {
  std::string out;
  out += fmt::format("{}   {}\n", style.bold("model"), model_line(p));
  out += fmt::format("{}  {}\n", style.bold("mmproj"),
                     p.mmproj_path.empty() ? std::string("none")
                                           : fmt::format("{} ({} weights + compute)", p.mmproj_path,
                                                         format_bytes_si(p.projector_bytes)));
  out += fmt::format("{}  {}\n", style.bold("server"), p.server_path);
  out += fmt::format("{} {} ({})\n\n", style.bold("profile"), p.profile, p.profile_reason);

  if (explain) {
    out += style.bold("settings") + " (value ← where it came from)\n";
    for (const auto& [key, resolved] : p.settings->all()) {
      out +=
          fmt::format("  {:<14} {:<16} ← {}", key, setting_text(resolved.value), resolved.source);
      if (!resolved.overridden.empty() && resolved.overridden.back().first != "built-in") {
        const auto& [source, value] = resolved.overridden.back();
        out += style.dim(fmt::format("  (over {} from {})", setting_text(value), source));
      }
      out += '\n';
    }
    out += '\n' + style.bold("command line") + " (option ← rule)\n";
    for (const auto& piece : p.command->pieces) {
      const auto* rule = launch::find_launch_rule(piece.rule);
      out += fmt::format(
          "  {:<34} {}{}\n", shell_join(piece.args),
          rule && !rule->fact.empty() ? fmt::format("[{}] ", rule->fact) : std::string(),
          rule ? rule->why : piece.rule);
    }
    out += '\n';
  }

  out += render_plan_text(*p.model, *p.config, *p.plan, style);
  if (p.rpc != nullptr) {
    out += render_rpc_text(*p.rpc, style);
  }
  if (!p.command->context_capped.empty()) {
    out += fmt::format("\n{}: {}\n", style.bold("context"), p.command->context_capped);
  }
  if (p.fit != nullptr && !p.fit->failed.empty()) {
    out += fmt::format("\n{} ({}, priority {}): {}\n", style.bold("fit"), p.fit->mode,
                       fmt::join(p.fit->priority, " > "), p.fit->failed);
  } else if (p.fit != nullptr && !p.fit->given_up.empty()) {
    out += fmt::format("\n{} ({}, priority {}): to fit, gave up\n", style.bold("fit"), p.fit->mode,
                       fmt::join(p.fit->priority, " > "));
    for (const auto& line : describe_fit_changes(*p.fit)) {
      out += "  - " + line + '\n';
    }
  }

  if (!p.environment->changes.empty()) {
    out += '\n' + style.bold("environment") + '\n';
    for (const auto& c : p.environment->changes) {
      const auto action = launch::change_action_name(c.action);
      const auto mark = c.action == launch::ChangeAction::removed      ? style.red(action)
                        : c.action == launch::ChangeAction::overridden ? style.yellow(action)
                                                                       : std::string(action);
      out += fmt::format("  {} {}={} — {} ({})\n", mark, c.name, c.value, c.reason, c.fact);
    }
  }
  // A tuned profile's measurements that outrank a rule: ✔, citing the tune.
  const auto measured = launch_measured(*p.rules);
  if (!measured.empty()) {
    out += '\n' + style.bold("measured by a tune (outranks the rule)") + '\n';
    for (const auto& line : measured) {
      out += "  ✔ " + line + '\n';
    }
  }
  if (!p.command->adaptations.empty()) {
    out += '\n' + style.bold("adapted to this llama-server build") + '\n';
    for (const auto& a : p.command->adaptations) {
      out += "  - " + a + '\n';
    }
  }
  const auto warnings = launch_warnings(*p.command, *p.environment, *p.rules);
  if (!warnings.empty()) {
    out += '\n' + style.bold(style.yellow("warnings")) + '\n';
    for (const auto& w : warnings) {
      out += "  - " + w + '\n';
    }
  }
  out += '\n' + style.bold("command") + '\n' + shell_join(p.command->argv) + '\n';
  return out;
}

}  // namespace gb10tune::render
