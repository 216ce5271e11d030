// The fit: when a configuration does not fit the memory budget (or when asked), the largest
// values of three knobs — context per slot, slots, prompt cache — that do, chosen one knob at
// a time in a priority order: the first knob is made as large as it can be with the later
// ones at their minimum, then kept, and so on. Each knob stays at or below what was asked.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::plan {

// What the fit may change.
enum class FitKnob { ctx_per_slot, slots, cache_ram };

// The knob's key in launch settings and profiles: "ctx_per_slot", "slots", "cache_ram_mib".
std::string_view fit_knob_key(FitKnob knob);

// The knob named by a settings key; nullopt for any other text.
std::optional<FitKnob> parse_fit_knob(std::string_view key);

// The default priority: context per slot first, then slots, then the prompt cache.
inline constexpr std::array<FitKnob, 3> kDefaultFitPriority{FitKnob::ctx_per_slot, FitKnob::slots,
                                                            FitKnob::cache_ram};

// Values of the three knobs.
struct FitKnobs {
  std::uint64_t ctx_per_slot = 0;  // cells one slot is planned for (a multiple of 256 once fitted)
  std::uint32_t slots = 1;
  std::uint64_t cache_ram_bytes = 0;  // whole MiB

  // The value of one knob, in its unit (cells, slots, bytes).
  std::uint64_t get(FitKnob knob) const;
};

// What the fit is asked to do.
struct FitRequest {
  FitKnobs asked;                                    // the upper bound of every knob
  std::array<bool, 3> adjustable{true, true, true};  // indexed by FitKnob
  std::vector<FitKnob> priority{kDefaultFitPriority.begin(), kDefaultFitPriority.end()};
  // The plan configuration for a choice of knobs (the caller keeps everything else, and may
  // change what depends on the knobs, e.g. a unified pool with several slots).
  std::function<PlanConfig(const FitKnobs&)> configure;
};

// One knob the fit lowered.
struct FitChange {
  FitKnob knob = FitKnob::ctx_per_slot;
  std::uint64_t asked = 0;
  std::uint64_t chosen = 0;
};

// The outcome: the chosen knobs, their configuration and plan, and what was given up.
struct FitResult {
  FitKnobs chosen;
  PlanConfig config;
  MemoryPlan plan;
  std::vector<FitChange> given_up;  // in priority order; empty when the asked values fit
};

// Finds the knobs (see the file comment) whose plan fits `budget`. The smallest values are 256
// cells per slot, 1 slot and no prompt cache. Errors: the budget's MemAvailable is unknown
// (ExitCode::failed), an invalid configuration (as make_plan), or nothing fits even at the
// smallest adjustable values (ExitCode::memory_refused, naming what is left over).
Expected<FitResult> fit_plan(const model::ModelFacts& model, const FitRequest& request,
                             const PlanBudget& budget);

}  // namespace gb10tune::plan
