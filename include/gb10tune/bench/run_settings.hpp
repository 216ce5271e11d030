// The settings of a benchmarked server, flattened to "key" → "value" so that two runs can be
// told apart setting by setting (K7: one change at a time).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gb10tune::bench {

// Flat settings. Keys: "model", "build", "spec-type", "spec-draft-n-max" (what the server
// runs), "props:<field>" (from /props), "argv:<flag>" (from the launch record's argv).
using RunSettings = std::map<std::string, std::string>;

// From a /props answer: "model" (model_path), "build" (build_info), "props:total_slots",
// "props:n_ctx" (per slot) and every scalar of default_generation_settings.params as
// "props:params.<dotted key>" (arrays as compact JSON), except "speculative.types": a request
// default in 3f545be, not the server's setting. Missing fields are left out.
RunSettings settings_from_props(const nlohmann::json& props);

// From an argv vector (argv[0], the program, is skipped): "argv:<flag>" → its value, or "on"
// for a switch. A following word is a value unless it starts with '-' and is not a number.
// The model flags (-m, --model) are left out: "model" names the model once.
RunSettings settings_from_argv(const std::vector<std::string>& argv);

// Speculative decoding as the benchmarked server runs it, and where that was read.
struct SpeculativeSetting {
  std::optional<bool> on;              // nullopt when no source says
  std::string type;                    // "draft-mtp", "none", "on (type not reported)", ""
  std::optional<std::uint32_t> n_max;  // --spec-draft-n-max (3 when unset), only when on
  std::string source;                  // "/slots: 3 of 3 slots speculative; launch record: …"
};

// Combines /slots (`slots_speculative` of `slots_reported` slots have a draft context: what
// the server runs) with the server's argv (null when unknown: which type, which n-max), named
// `argv_source` ("launch record", "the server's command line") in `source`. /props is not a
// source: its speculative fields are per-request defaults. When the two disagree, /slots wins
// and `source` says both.
SpeculativeSetting resolve_speculative(std::size_t slots_reported, std::size_t slots_speculative,
                                       const std::vector<std::string>* argv,
                                       std::string_view argv_source = "launch record");

// The settings keys of `spec`: "spec-type" and, when drafting, "spec-draft-n-max".
RunSettings settings_from_speculative(const SpeculativeSetting& spec);

// The RPC workers the server uses (its --rpc value, "host:port,…") from its argv; "" when it
// uses none. Only called with a known argv: without one the topology is unknown.
std::string rpc_workers_from_argv(const std::vector<std::string>& argv);

// The settings key of the topology: "rpc" → the workers, only when the server uses some (so
// that a run without workers, or saved before this key existed, differs from one with them).
RunSettings settings_from_rpc(const std::string& workers);

// One setting that differs between two runs; an empty side means "not set".
struct SettingDifference {
  std::string key;
  std::string a;
  std::string b;
};

// The differences between `a` and `b` that count for K7: the keys without a group ("model",
// "build", "spec-type", "spec-draft-n-max", "rpc"; "argv:--rpc" is counted as "rpc"), and the
// "argv:" keys when both runs have any (the flags are the causes; one flag can move several /props
// fields, -np both total_slots and n_ctx), else the "props:" keys. The --spec-* flags are counted
// once, as "spec-type" and "spec-draft-n-max"; a draft depth that only one side has follows from
// "spec-type".
std::vector<SettingDifference> setting_differences(const RunSettings& a, const RunSettings& b);

}  // namespace gb10tune::bench
