#include "gb10tune/plan/fit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::plan {

namespace {

constexpr std::uint64_t kCellStep = 256;  // llama_context pads each slot's context to this
constexpr std::uint64_t kMiB = 1ull << 20;

std::size_t index(FitKnob knob) {
  return static_cast<std::size_t>(knob);
}

void set(FitKnobs& knobs, FitKnob knob, std::uint64_t value) {
  switch (knob) {
    case FitKnob::ctx_per_slot:
      knobs.ctx_per_slot = value;
      break;
    case FitKnob::slots:
      knobs.slots = static_cast<std::uint32_t>(value);
      break;
    case FitKnob::cache_ram:
      knobs.cache_ram_bytes = value;
      break;
  }
}

// The values one knob can take, as steps 0..last: value(step) never exceeds what was asked.
struct KnobRange {
  std::uint64_t asked = 0;
  std::uint64_t unit = 1;
  std::uint64_t first = 0;  // the smallest step

  std::uint64_t last() const { return std::max(first, (asked + unit - 1) / unit); }
  std::uint64_t value(std::uint64_t step) const { return std::min(step * unit, asked); }
};

KnobRange range_of(FitKnob knob, std::uint64_t asked) {
  switch (knob) {
    case FitKnob::ctx_per_slot:
      return {asked, kCellStep, 1};
    case FitKnob::slots:
      return {asked, 1, 1};
    case FitKnob::cache_ram:
      break;
  }
  return {asked, kMiB, 0};
}

}  // namespace

std::string_view fit_knob_key(FitKnob knob) {
  switch (knob) {
    case FitKnob::ctx_per_slot:
      return "ctx_per_slot";
    case FitKnob::slots:
      return "slots";
    case FitKnob::cache_ram:
      break;
  }
  return "cache_ram_mib";
}

std::optional<FitKnob> parse_fit_knob(std::string_view key) {
  for (FitKnob knob : kDefaultFitPriority) {
    if (fit_knob_key(knob) == key) {
      return knob;
    }
  }
  return std::nullopt;
}

std::uint64_t FitKnobs::get(FitKnob knob) const {
  switch (knob) {
    case FitKnob::ctx_per_slot:
      return ctx_per_slot;
    case FitKnob::slots:
      return slots;
    case FitKnob::cache_ram:
      break;
  }
  return cache_ram_bytes;
}

Expected<FitResult> fit_plan(const model::ModelFacts& model, const FitRequest& request,
                             const PlanBudget& budget) {
  if (!budget.mem_available) {
    return Error{"MemAvailable is unknown (/proc/meminfo unreadable): there is no budget to fit",
                 ExitCode::failed};
  }
  const auto plan_for = [&](const FitKnobs& knobs) {
    return make_plan(model, request.configure(knobs), budget);
  };
  FitResult result;
  result.chosen = request.asked;
  auto asked_plan = plan_for(request.asked);
  if (!asked_plan) {
    return asked_plan.error();
  }
  if (asked_plan->fits) {
    result.config = request.configure(request.asked);
    result.plan = std::move(*asked_plan);
    return result;
  }

  // Every knob gets decided once: the given order first, then any it left out.
  std::vector<FitKnob> order;
  for (FitKnob knob : request.priority) {
    if (std::find(order.begin(), order.end(), knob) == order.end()) {
      order.push_back(knob);
    }
  }
  for (FitKnob knob : kDefaultFitPriority) {
    if (std::find(order.begin(), order.end(), knob) == order.end()) {
      order.push_back(knob);
    }
  }

  FitKnobs current = request.asked;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const FitKnob knob = order[i];
    if (!request.adjustable[index(knob)]) {
      continue;
    }
    // The later knobs at their smallest, so that this one can be as large as possible.
    FitKnobs trial = current;
    for (std::size_t j = i + 1; j < order.size(); ++j) {
      if (request.adjustable[index(order[j])]) {
        const KnobRange later = range_of(order[j], request.asked.get(order[j]));
        set(trial, order[j], later.value(later.first));
      }
    }
    const KnobRange range = range_of(knob, request.asked.get(knob));
    const auto fits_at = [&](std::uint64_t step) -> Expected<bool> {
      FitKnobs probe = trial;
      set(probe, knob, range.value(step));
      auto plan = plan_for(probe);
      if (!plan) {
        return plan.error();
      }
      return plan->fits;
    };
    const auto smallest = fits_at(range.first);
    if (!smallest) {
      return smallest.error();
    }
    if (!*smallest) {
      set(trial, knob, range.value(range.first));
      const auto floor = plan_for(trial);
      return Error{
          fmt::format("nothing fits: even {} cells per slot, {} slot(s) and a prompt "
                      "cache of {} need {}, more than the {} available (MemAvailable "
                      "minus the reserve); free memory, lower --reserve or choose a "
                      "smaller model",
                      trial.ctx_per_slot, trial.slots, format_bytes(trial.cache_ram_bytes),
                      format_bytes(floor ? floor->total_bytes : 0),
                      format_bytes(floor && floor->available_bytes ? *floor->available_bytes : 0)),
          ExitCode::memory_refused};
    }
    std::uint64_t low = range.first;  // fits
    std::uint64_t high = range.last();
    while (low < high) {
      const std::uint64_t mid = low + (high - low + 1) / 2;
      const auto ok = fits_at(mid);
      if (!ok) {
        return ok.error();
      }
      if (*ok) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    set(current, knob, range.value(low));
  }

  auto plan = plan_for(current);
  if (!plan) {
    return plan.error();
  }
  if (!plan->fits) {
    // Only when no knob may change: the loop above returns before for any other case.
    std::string fixed;
    for (FitKnob knob : order) {
      fixed += (fixed.empty() ? "" : ", ") + std::string(fit_knob_key(knob));
    }
    return Error{fmt::format("nothing fits, and the fit may not lower {} (each was given "
                             "explicitly); lower them, or let the fit (--fit)",
                             fixed),
                 ExitCode::memory_refused};
  }
  result.chosen = current;
  result.config = request.configure(current);
  result.plan = std::move(*plan);
  for (FitKnob knob : order) {
    if (current.get(knob) < request.asked.get(knob)) {
      result.given_up.push_back({knob, request.asked.get(knob), current.get(knob)});
    }
  }
  return result;
}

}  // namespace gb10tune::plan
