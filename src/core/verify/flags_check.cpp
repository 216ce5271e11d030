#include "gb10tune/verify/flags_check.hpp"

#include <fmt/format.h>

#include <set>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/server/rules.hpp"
#include "gb10tune/server/settings.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::verify {

namespace {

std::string describe(const server::SettingValue& value) {
  return fmt::format("{} ({} {})", value.value, server::source_name(value.source), value.origin);
}

// The slots of a server started without -np, from the build's --help: "(default: -1, -1 =
// auto)" in 3f545be is 4 slots sharing one unified pool (K17); "(default: 1)" in c392e50.
// nullopt when the help does not say; `auto_slots` is set for -1.
std::optional<std::uint32_t> default_slots(const server::ServerFlags& flags, bool& auto_slots) {
  const server::FlagSpec* spec = flags.find("--parallel");
  if (spec == nullptr) {
    return std::nullopt;
  }
  const std::string_view text = spec->description;
  const auto at = text.find("default: ");
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view value = text.substr(at + 9);
  if (starts_with(value, "-1")) {
    auto_slots = true;
    return 4;
  }
  const auto n = parse_u64(value.substr(0, value.find_first_not_of("0123456789")));
  if (!n || *n == 0 || *n >= 1024) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(*n);
}

// What /props and /slots should say, from the effective settings (K17 defaults: -np unset is
// the build's default, in 3f545be 4 slots sharing one unified pool; -c unset is the training
// context per stream). `n_ctx_train` (0 when the model is unknown) caps the per-slot context
// as the server does.
Expectations expectations_of(const server::EffectiveSettings& settings,
                             const server::ServerFlags& flags, std::uint64_t n_ctx_train) {
  Expectations expected;
  expected.source = "flags";
  bool auto_slots = false;
  std::optional<std::uint32_t> slots;
  if (const auto* parallel = settings.get("parallel")) {
    if (const auto n = parse_u64(parallel->value); n && *n > 0 && *n < 1024) {
      slots = static_cast<std::uint32_t>(*n);
    }
  } else {
    slots = default_slots(flags, auto_slots);
  }
  expected.slots = slots;
  const bool unified =
      settings.is_on("kv-unified") || (auto_slots && !settings.is_off("kv-unified"));
  std::uint64_t n_ctx = 0;
  bool ctx_known = true;
  if (const auto* ctx = settings.get("ctx-size")) {
    const auto n = parse_u64(ctx->value);
    ctx_known = n.has_value();
    n_ctx = n.value_or(0);
  }
  if (ctx_known && slots && (n_ctx > 0 || n_ctx_train > 0)) {
    expected.ctx_per_slot = server_ctx_per_slot(n_ctx, *slots, unified, n_ctx_train);
  }
  if (const auto* spec = settings.get("spec-type")) {
    bool any = false;
    for (const auto part : split(spec->value, ',')) {
      const auto type = trim(part);
      any = any || (!type.empty() && type != "none");
    }
    expected.speculative = any;
    expected.spec_type = spec->value;
    expected.spec_origin = fmt::format("{} {}", server::source_name(spec->source), spec->origin);
    if (any) {
      expected.draft_n_max = 3;  // llama.cpp's default
      if (const auto* depth = settings.get("spec-draft-n-max")) {
        if (const auto n = parse_u64(depth->value); n && *n <= 1024) {
          expected.draft_n_max = static_cast<std::uint32_t>(*n);
        }
      }
    }
  }
  if (const auto* model = settings.get("-m")) {
    expected.model_path = model->value;
  }
  return expected;
}

// The differences between what launch started and what the process runs with.
Finding drift_finding(const server::ServerFlags& flags, const server::EffectiveSettings& actual,
                      const launch::LaunchRecord& record, const std::vector<std::string>& argv) {
  Finding drift;
  drift.id = "launch-drift";
  drift.fact = "K16";
  drift.summary = "settings match the launch plan";
  server::SettingInputs planned_inputs;
  planned_inputs.argv = record.argv;
  planned_inputs.system_config.reset();
  planned_inputs.user_config.reset();
  const server::EffectiveSettings planned = server::resolve_settings(flags, planned_inputs);

  std::set<std::string> keys;
  for (const auto& [key, value] : planned.values) {
    keys.insert(key);
  }
  for (const auto& [key, value] : actual.values) {
    keys.insert(key);
  }
  std::vector<std::string> diffs;
  for (const std::string& key : keys) {
    const server::SettingValue* want = planned.get(key);
    const server::SettingValue* have = actual.get(key);
    if (want != nullptr && have != nullptr && want->value == have->value) {
      continue;
    }
    diffs.push_back(fmt::format("{}: {} → {}", key, want ? want->value : "unset",
                                have ? describe(*have) : "unset"));
  }
  if (diffs.empty() && argv != record.argv) {
    diffs.push_back("the command line differs from the recorded one in spelling only");
  }
  if (diffs.empty()) {
    drift.evidence = fmt::format("{} settings as launched", actual.values.size());
    return drift;
  }
  drift.severity = Severity::warn;
  drift.evidence = fmt::format("{}", fmt::join(diffs, "; "));
  drift.fix =
      "remove the stray LLAMA_ARG_* variable or config.ini entry, or launch again with "
      "the settings you want (one change at a time, K7)";
  return drift;
}

}  // namespace

FlagsOutcome check_flags(const platform::Sysroot& root, const ProcessSnapshot& snapshot,
                         const server::ServerFlags& flags, const launch::LaunchRecord* record) {
  FlagsOutcome outcome;
  const platform::Environment env = snapshot.env.value_or(platform::Environment());
  const server::SettingInputs inputs = server::gather_inputs(root, env, snapshot.process.argv);
  const server::EffectiveSettings settings = server::resolve_settings(flags, inputs);

  Finding sources;
  sources.id = "settings-sources";
  sources.fact = "K16";
  sources.summary = "effective settings from all four sources";
  std::vector<std::string> outside;
  for (const auto& [key, value] : settings.values) {
    if (value.source != server::SettingSource::command_line) {
      outside.push_back(fmt::format("{}={}", key, describe(value)));
    }
  }
  sources.evidence =
      fmt::format("{} settings, {} from outside the command line{}{}", settings.values.size(),
                  outside.size(), outside.empty() ? "" : ": ", fmt::join(outside, ", "));
  if (!snapshot.env) {
    sources.severity = Severity::warn;
    sources.evidence += "; LLAMA_ARG_* unknown (environment unreadable)";
    sources.fix = "run 'sudo gb10tune verify'";
  }
  if (!settings.warnings.empty()) {
    sources.severity = Severity::warn;
    sources.evidence += fmt::format("; not understood: {}", fmt::join(settings.warnings, "; "));
    if (sources.fix.empty()) {
      sources.fix = "fix or remove what this llama-server build does not accept (K15)";
    }
  }
  outcome.findings.push_back(std::move(sources));

  server::RuleInput rule_input;
  rule_input.gb10 = sys::is_gb10_machine(root);
  std::uint64_t n_ctx_train = 0;
  if (record != nullptr) {
    rule_input.model_has_mtp = record->model_has_mtp;
    // The tuned profile's measurements its launch judged the rules with.
    rule_input.measured = record->rules_measured;
    if (record->model_layers > 0) {
      rule_input.model_layers = record->model_layers;
    }
  } else if (const auto* model = settings.get("-m")) {
    // No launch record: the model's own header says whether it has an MTP head. A relative
    // path is relative to the server's working directory.
    std::filesystem::path path = model->value;
    if (path.is_relative() && snapshot.process.cwd) {
      path = *snapshot.process.cwd / path;
    }
    if (const auto file = gguf::read_gguf(root.resolve(path.string()).string())) {
      if (const auto facts = model::describe_model(*file); facts && facts->supported) {
        rule_input.model_has_mtp = facts->has_mtp();
        rule_input.model_layers = facts->main_layer_count;
        n_ctx_train = facts->context_length;
      }
    }
  }
  for (Finding& finding : server::check_rules(settings, rule_input)) {
    outcome.findings.push_back(std::move(finding));
  }
  if (record != nullptr) {
    outcome.findings.push_back(drift_finding(flags, settings, *record, snapshot.process.argv));
  }

  outcome.expected = expectations_of(settings, flags, n_ctx_train);
  outcome.expected.model_has_mtp = rule_input.model_has_mtp;
  std::vector<std::string> host_port{"llama-server"};
  if (const auto* host = settings.get("host")) {
    host_port.insert(host_port.end(), {"--host", host->value});
  }
  if (const auto* port = settings.get("port")) {
    host_port.insert(host_port.end(), {"--port", port->value});
  }
  outcome.url = url_from_process(host_port, nullptr);
  return outcome;
}

}  // namespace gb10tune::verify
