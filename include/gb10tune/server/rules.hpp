// The tuning rules (K-facts as data) that launch applies and verify checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/server/settings.hpp"

namespace gb10tune::server {

// How bad a finding is. not_applicable: the fact does not apply to this machine (a GPU check
// where there is no GPU); said so, and better than ok when findings are weighed.
enum class Severity { ok, warn, fail, not_applicable };

// "ok", "warn", "fail", "not-applicable".
std::string_view severity_name(Severity severity);

// One rule's verdict on one server.
struct Finding {
  std::string id;    // stable id: "all-layers-on-gpu", "mtp-when-model-has-head", …
  std::string fact;  // the K-fact it encodes: "K1", "K4", …
  Severity severity = Severity::ok;
  std::string summary;   // one line: what was checked
  std::string evidence;  // what was seen, naming the setting's source
  std::string fix;       // what to do; empty when ok
  // The tune's measurement that outranks this rule here (a MeasuredSetting's citation): the
  // finding is then ok, its evidence the citation; "" otherwise.
  std::string measured;
};

// What a tune measured for one setting a rule gives advice on (a tuned profile's evidence, kept
// in the launch record): on the same model and build it outranks the rule.
struct MeasuredSetting {
  std::string rule;    // the rule's id ("flash-attention-on")
  std::string option;  // the option as the rules read it ("-fa", "--spec-type")
  // Its measured value ("off"); "" for --spec-type: not drafting.
  std::string value;
  // "flash_attn off: measured by gb10tune tune on 2026-12-04 (profile …): on → off 1.18× [1.05,
  // 1.33] decode t/s, on this model and build".
  std::string citation;
  // Why it does not stand here ("the profile was tuned for /m/a.gguf, not /m/b.gguf"): the
  // rule's finding stands, with this as a note. "" when it applies.
  std::string not_applied;
};

// What the rules need to know besides the settings.
struct RuleInput {
  std::optional<bool> model_has_mtp;          // nullopt: the model is unknown
  std::optional<std::uint32_t> model_layers;  // block count, for "all layers on the GPU"
  bool gb10 = false;                          // the GPU is a GB10 (K19: no mmap loading)
  // A tune's measurements (a tuned profile's): a finding that is not ok and whose setting has
  // the measured value becomes ok citing the measurement, or keeps its severity with the note
  // of why the measurement does not apply.
  std::vector<MeasuredSetting> measured = {};
};

// Checks the effective settings against every rule (K1 all layers on the GPU, flash attention
// on, K4 draft-mtp when the model has an MTP head and draft n-max ≥ 4, K6 no
// --backend-sampling with MTP, K8 -kvu and --cache-ram when np > 1, K19 no mmap loading on
// GB10). One finding per rule, in that order; then `input.measured` over them.
std::vector<Finding> check_rules(const EffectiveSettings& settings, const RuleInput& input);

}  // namespace gb10tune::server
