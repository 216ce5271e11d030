#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// One captured run and the plan launch makes for its model and flags.
struct CapturedPlan {
  nlohmann::json run;
  plan::MemoryPlan plan;
};

// Which runs of a fixture to plan: the run and its model.
using CapturedRunFilter = std::function<bool(const nlohmann::json&, const model::ModelFacts&)>;

// The plans of the runs of `fixture` that `keep` accepts (every run when it is empty), made the
// way launch makes them on the H200 of the captures: the default margin, 120 GiB available and,
// on CUDA, one GPU "CUDA0" with 143 156 MiB free. A run that cannot be planned is a test
// failure naming it, and is left out.
std::vector<CapturedPlan> plan_captured_runs(const nlohmann::json& fixture,
                                             const CapturedRunFilter& keep = {});

}  // namespace gb10tune::testing
