#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "support/gguf_writer.hpp"

namespace gb10tune::testing {

// The JSON fixture tests/fixtures/<relative>; an empty object (and a test failure naming it)
// when it cannot be read.
nlohmann::json fixture_json(const std::string& relative);

// A captured model's GGUF header (the fixtures' "metadata" and "tensors": [name, ne, type] and,
// where captured, the data offset as a fourth item), ready to write.
GgufWriter captured_header(const nlohmann::json& description);

// The plan settings of a captured run (the fixtures' "config": ctx, slots, kvu, fa, ubatch,
// and where given backend "cuda", ngl, mtp, draft_n_max, cache_k and cache_v), with no prompt
// cache and no margin.
plan::PlanConfig captured_plan_config(const nlohmann::json& config);

// The models of a fixture's "models" (name → captured header), as launch describes them; a
// test failure names any that cannot be read.
std::map<std::string, model::ModelFacts> captured_models(const nlohmann::json& models);

}  // namespace gb10tune::testing
