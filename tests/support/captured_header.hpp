#pragma once

#include <nlohmann/json.hpp>

#include "gb10tune/plan/memory_plan.hpp"
#include "support/gguf_writer.hpp"

namespace gb10tune::testing {

// A captured model's GGUF header (the fixtures' "metadata" and "tensors": [name, ne, type] and,
// where captured, the data offset as a fourth item), ready to write.
GgufWriter captured_header(const nlohmann::json& description);

// The plan settings of a captured run (the fixtures' "config": ctx, slots, kvu, fa, ubatch,
// and where given backend "cuda" and ngl), with no prompt cache and no margin.
plan::PlanConfig captured_plan_config(const nlohmann::json& config);

}  // namespace gb10tune::testing
