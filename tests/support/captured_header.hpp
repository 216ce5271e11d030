#pragma once

#include <nlohmann/json.hpp>
#include <string>

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
// and where given backend "cuda", ngl, mtp and draft_n_max), with no prompt cache and no margin.
plan::PlanConfig captured_plan_config(const nlohmann::json& config);

}  // namespace gb10tune::testing
