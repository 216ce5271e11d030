// The tuning rules (K-facts as data) that launch applies and verify checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/server/settings.hpp"

namespace gb10tune::server {

// How bad a finding is.
enum class Severity { ok, warn, fail };

// "ok", "warn", "fail".
std::string_view severity_name(Severity severity);

// One rule's verdict on one server.
struct Finding {
  std::string id;    // stable id: "all-layers-on-gpu", "mtp-when-model-has-head", …
  std::string fact;  // the K-fact it encodes: "K1", "K4", …
  Severity severity = Severity::ok;
  std::string summary;   // one line: what was checked
  std::string evidence;  // what was seen, naming the setting's source
  std::string fix;       // what to do; empty when ok
};

// What the rules need to know besides the settings.
struct RuleInput {
  std::optional<bool> model_has_mtp;          // nullopt: the model is unknown
  std::optional<std::uint32_t> model_layers;  // block count, for "all layers on the GPU"
  bool gb10 = false;                          // the GPU is a GB10 (K19: no mmap loading)
};

// Checks the effective settings against every rule (K1 all layers on the GPU, flash attention
// on, K4 draft-mtp when the model has an MTP head and draft n-max ≥ 4, K6 no
// --backend-sampling with MTP, K8 -kvu and --cache-ram when np > 1, K19 no mmap loading on
// GB10). One finding per rule, in that order.
std::vector<Finding> check_rules(const EffectiveSettings& settings, const RuleInput& input);

}  // namespace gb10tune::server
