#include "gb10tune/server/rules.hpp"

#include <fmt/format.h>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::server {

namespace {

// "-ngl 99 (command line, argv[2] -ngl)" or "not set".
std::string describe(const EffectiveSettings& s, std::string_view name) {
  const auto* v = s.get(name);
  if (v == nullptr) {
    return fmt::format("{} not set", name);
  }
  return fmt::format("{} {} (from {}: {})", name, v->value.empty() ? "on" : v->value,
                     source_name(v->source), v->origin);
}

Finding make(std::string id, std::string fact, std::string summary) {
  Finding f;
  f.id = std::move(id);
  f.fact = std::move(fact);
  f.summary = std::move(summary);
  return f;
}

void set(Finding& f, Severity severity, std::string evidence, std::string fix = {}) {
  f.severity = severity;
  f.evidence = std::move(evidence);
  f.fix = std::move(fix);
}

bool mtp_on(const EffectiveSettings& s) {
  const auto* v = s.get("--spec-type");
  if (v == nullptr) {
    return false;
  }
  for (const auto part : split(v->value, ',')) {
    if (trim(part) == "draft-mtp") {
      return true;
    }
  }
  return false;
}

// The -np value: nullopt when unset or "auto" (-1).
std::optional<std::int64_t> slots(const EffectiveSettings& s) {
  const auto* v = s.get("-np");
  if (v == nullptr) {
    return std::nullopt;
  }
  try {
    const auto n = std::stoll(v->value);
    return n < 0 ? std::nullopt : std::optional<std::int64_t>(n);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Finding gpu_layers(const EffectiveSettings& s, const RuleInput& in) {
  auto f = make("all-layers-on-gpu", "K1", "all layers on the GPU");
  const auto* v = s.get("-ngl");
  const auto fix = std::string("pass -ngl all (or -ngl 99)");
  if (v == nullptr || v->value == "auto") {
    set(f, Severity::warn,
        fmt::format("{}: llama.cpp then fits layers to free memory and may leave some on the CPU "
                    "(~76 GB/s instead of the GPU path)",
                    describe(s, "-ngl")),
        fix);
    return f;
  }
  if (v->value == "all") {
    set(f, Severity::ok, describe(s, "-ngl"));
    return f;
  }
  const auto n = parse_u64(v->value);
  const std::uint64_t needed = in.model_layers ? *in.model_layers + 1 : 99;
  if (n && *n >= needed) {
    set(f, Severity::ok, describe(s, "-ngl"));
  } else if (n && !in.model_layers && *n > 0) {
    set(f, Severity::warn,
        fmt::format("{}; the model's layer count is unknown", describe(s, "-ngl")), fix);
  } else {
    set(f, Severity::fail,
        fmt::format("{}: fewer than the model's {} layers + output", describe(s, "-ngl"),
                    in.model_layers ? std::to_string(*in.model_layers) : std::string("?")),
        fix);
  }
  return f;
}

Finding flash_attention(const EffectiveSettings& s) {
  auto f = make("flash-attention-on", "K9", "flash attention on");
  const auto* v = s.get("-fa");
  if (v != nullptr && (v->value == "on" || v->value == "true" || v->value == "1")) {
    set(f, Severity::ok, describe(s, "-fa"));
  } else if (v == nullptr || v->value == "auto") {
    set(f, Severity::warn,
        fmt::format("{}: 'auto' turns it off when a backend lacks support", describe(s, "-fa")),
        "pass -fa on");
  } else {
    set(f, Severity::fail, describe(s, "-fa"), "pass -fa on");
  }
  return f;
}

Finding mtp_head(const EffectiveSettings& s, const RuleInput& in) {
  auto f = make("mtp-when-model-has-head", "K4",
                "MTP speculative decoding when the model has "
                "an MTP head");
  const bool on = mtp_on(s);
  if (!in.model_has_mtp) {
    set(f, on ? Severity::ok : Severity::warn,
        fmt::format("{}; the model is unknown", describe(s, "--spec-type")),
        on ? "" : "give the model so that its MTP head can be checked");
  } else if (*in.model_has_mtp && !on) {
    set(f, Severity::fail,
        fmt::format("the model has an MTP head but {}", describe(s, "--spec-type")),
        "pass --spec-type draft-mtp (+15.6% decode with --spec-draft-n-max 4 in the report)");
  } else if (!*in.model_has_mtp && on) {
    set(f, Severity::fail,
        fmt::format("{} but the model has no MTP head", describe(s, "--spec-type")),
        "drop --spec-type draft-mtp");
  } else {
    set(f, Severity::ok,
        *in.model_has_mtp ? describe(s, "--spec-type") : "the model has no MTP head");
  }
  return f;
}

Finding draft_depth(const EffectiveSettings& s) {
  auto f = make("draft-n-max-4", "K4", "draft depth --spec-draft-n-max ≥ 4 with MTP");
  if (!mtp_on(s)) {
    set(f, Severity::ok, "no MTP drafting");
    return f;
  }
  const auto* v = s.get("--spec-draft-n-max");
  const auto n = v ? parse_u64(v->value) : std::optional<std::uint64_t>(3);
  if (n && *n >= 4) {
    set(f, Severity::ok, describe(s, "--spec-draft-n-max"));
  } else {
    set(f, Severity::warn,
        fmt::format("{} (default 3): mean accepted length is capped at {}",
                    describe(s, "--spec-draft-n-max"), n ? *n + 1 : 4),
        "pass --spec-draft-n-max 4 (20.5 → 23.7 t/s in the report)");
  }
  return f;
}

Finding backend_sampling(const EffectiveSettings& s) {
  auto f = make("no-backend-sampling-with-mtp", "K6", "no --backend-sampling together with MTP");
  const bool sampling = s.is_on("--backend-sampling");
  if (sampling && mtp_on(s)) {
    set(f, Severity::fail,
        fmt::format("{} with {}: decode −57%, prefill −87% in the report",
                    describe(s, "--backend-sampling"), describe(s, "--spec-type")),
        "remove --backend-sampling (and LLAMA_ARG_BACKEND_SAMPLING)");
  } else {
    set(f, Severity::ok, describe(s, "--backend-sampling"));
  }
  return f;
}

Finding unified_cache(const EffectiveSettings& s) {
  auto f = make("kvu-with-cache-ram", "K8",
                "one unified KV pool and a prompt cache with "
                "several slots");
  const auto n = slots(s);
  if (!n) {
    // -np auto: llama.cpp picks 4 slots and a unified pool unless -no-kvu is given.
    if (s.is_off("-kvu")) {
      set(f, Severity::fail,
          fmt::format("{} with {}: saved prompt state per slot does not fit the cache",
                      describe(s, "-np"), describe(s, "-kvu")),
          "drop -no-kvu");
    } else {
      set(f, Severity::ok, fmt::format("{} (auto: unified pool)", describe(s, "-np")));
    }
    return f;
  }
  if (*n <= 1) {
    set(f, Severity::ok, fmt::format("{}: one slot", describe(s, "-np")));
    return f;
  }
  if (!s.is_on("-kvu")) {
    set(f, Severity::fail,
        fmt::format("{} without a unified pool ({}): a full slot's prompt state exceeds the "
                    "cache and long sessions are re-prefilled (6–8 min)",
                    describe(s, "-np"), describe(s, "-kvu")),
        "pass -kvu --cache-ram 24576");
    return f;
  }
  const auto* ram = s.get("--cache-ram");
  if (ram != nullptr && ram->value == "0") {
    set(f, Severity::warn,
        fmt::format("{}: the prompt cache is disabled", describe(s, "--cache-ram")),
        "pass --cache-ram 24576");
    return f;
  }
  set(f, Severity::ok,
      fmt::format("{}, {}, {}", describe(s, "-np"), describe(s, "-kvu"),
                  describe(s, "--cache-ram")));
  return f;
}

Finding load_mode(const EffectiveSettings& s, const RuleInput& in) {
  auto f = make("no-mmap-on-gb10", "K19", "no mmap loading on GB10");
  const auto* mode = s.get("--load-mode");
  const bool mmap = (mode != nullptr && mode->value == "mmap") || s.is_on("--mmap");
  if (in.gb10 && mmap) {
    set(f, Severity::warn,
        fmt::format("{}{}: loading through mmap took 224 s instead of 22 s on GB10",
                    describe(s, "--load-mode"),
                    s.get("--mmap") ? ", " + describe(s, "--mmap") : ""),
        "drop the mmap setting (the default avoids mmap on integrated GPUs)");
  } else {
    set(f, Severity::ok, in.gb10 ? describe(s, "--load-mode") : "not a GB10");
  }
  return f;
}

// Whether the settings hold the measured value of `m`.
bool holds_measured(const EffectiveSettings& s, const MeasuredSetting& m) {
  if (m.option == "--spec-type" && m.value.empty()) {
    return !mtp_on(s);
  }
  const auto* v = s.get(m.option);
  return v != nullptr && v->value == m.value;
}

// A finding that is not ok and whose setting has a measured value: ok citing the measurement
// where it applies; else it stands, saying why the measurement does not apply.
void apply_measured(std::vector<Finding>& findings, const EffectiveSettings& s,
                    const std::vector<MeasuredSetting>& measured) {
  for (Finding& f : findings) {
    if (f.severity == Severity::ok) {
      continue;
    }
    for (const MeasuredSetting& m : measured) {
      if (m.rule != f.id || !holds_measured(s, m)) {
        continue;
      }
      if (!m.not_applied.empty()) {
        f.evidence += fmt::format("; a tune measured this setting, but {}", m.not_applied);
        break;
      }
      f.evidence =
          fmt::format("{} (the rule's advice: {})", m.citation, f.fix.empty() ? f.evidence : f.fix);
      f.severity = Severity::ok;
      f.fix.clear();
      f.measured = m.citation;
      break;
    }
  }
}

}  // namespace

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::ok:
      return "ok";
    case Severity::warn:
      return "warn";
    case Severity::fail:
      return "fail";
    case Severity::not_applicable:
      return "not-applicable";
  }
  return "?";
}

std::vector<Finding> check_rules(const EffectiveSettings& settings, const RuleInput& input) {
  std::vector<Finding> findings = {gpu_layers(settings, input), flash_attention(settings),
                                   mtp_head(settings, input),   draft_depth(settings),
                                   backend_sampling(settings),  unified_cache(settings),
                                   load_mode(settings, input)};
  apply_measured(findings, settings, input.measured);
  return findings;
}

}  // namespace gb10tune::server
