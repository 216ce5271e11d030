// Rendering a memory plan: the text table of `launch --dry-run` and its JSON document.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/render/document.hpp"

namespace gb10tune::render {

// The `launch` dry-run document: model facts, configuration and every plan figure as a named
// integer field.
nlohmann::json plan_to_json(const model::ModelFacts& model, const plan::PlanConfig& config,
                            const plan::MemoryPlan& plan);

// The text table: one line per figure, total, available, margin, and what fits when the plan
// does not.
std::string render_plan_text(const model::ModelFacts& model, const plan::PlanConfig& config,
                             const plan::MemoryPlan& plan, const TextStyle& style);

// For a plan that does not fit: "What fits: 2 slot(s) of 65536 cells." or, when no smaller
// configuration fits either, "Nothing fits with these settings: …" with what to lower. The
// same sentence closes the text table and the refusal on stderr.
std::string what_fits(const plan::PlanConfig& config, const plan::MemoryPlan& plan);

}  // namespace gb10tune::render
