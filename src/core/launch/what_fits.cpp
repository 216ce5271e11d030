// The what-fits table: one launch plan per row and cache type, the largest context per slot
// from the planner's own search (MemoryPlan::max_ctx_per_slot_that_fits), and launch's choice.
#include "gb10tune/launch/what_fits.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/bench/roofline.hpp"
#include "gb10tune/gguf/ggml_type.hpp"

namespace gb10tune::launch {

namespace {

// The plan of `request` under `context`.
Expected<LaunchPlan> plan_request(const LaunchRequest& request, const PlannerContext& context) {
  auto draft = draft_launch(request, context);
  if (!draft) {
    return draft.error();
  }
  return plan_launch(std::move(*draft), context, /*contact_workers=*/false);
}

// The largest context per slot that fits with `slots` slots and cache type `type`.
Expected<std::uint64_t> largest_context(LaunchRequest request, const PlannerContext& context,
                                        std::uint32_t slots, std::string_view type,
                                        std::uint64_t training) {
  request.values["slots"] = slots;
  request.values["ctx_per_slot"] = training;
  request.values["cache_type_k"] = std::string(type);
  request.values["cache_type_v"] = std::string(type);
  request.values["fit"] = "off";
  auto planned = plan_request(request, context);
  if (!planned) {
    return planned.error();
  }
  const plan::MemoryPlan& p = planned->plan;
  if (!budget_known(p)) {
    return Error{"the machine's MemAvailable is unknown, so nothing can be checked"};
  }
  if (p.fits) {
    return training;
  }
  // With one pool for all slots (-kvu) the planner's search sizes the pool: each slot's share
  // is a slots-th of it, in whole 256-cell steps as -c is padded.
  const std::uint64_t largest = p.max_ctx_per_slot_that_fits;
  return planned->config.kv_unified ? largest / slots / 256 * 256 : largest;
}

LaunchChoice choice_of(const LaunchPlan& p) {
  LaunchChoice c;
  c.argv = p.draft.built.command.argv;
  c.slots = p.config.slots;
  c.ctx_per_slot = p.plan.ctx_per_slot;
  c.kv_unified = p.config.kv_unified;
  c.cache_type_k = std::string(gguf::ggml_type_info(p.config.cache_k).name);
  c.cache_type_v = std::string(gguf::ggml_type_info(p.config.cache_v).name);
  c.mtp = p.config.mtp;
  c.total_bytes = p.plan.total_bytes;
  c.available_bytes = p.plan.available_bytes;
  c.fits = p.plan.fits;
  c.fitted = p.fit && !p.fit->given_up.empty();
  c.config = p.config;
  c.memory = p.plan;
  return c;
}

}  // namespace

DecodeCeiling decode_ceiling(std::uint64_t bytes_per_token, const TargetMachine& machine,
                             bool mtp) {
  const bench::Roofline roof =
      bench::compute_roofline({bytes_per_token, "the model's header",
                               machine.bandwidth_bytes_per_second, machine.bandwidth_source},
                              0, std::nullopt);
  DecodeCeiling c;
  c.bytes_per_token = bytes_per_token;
  c.bandwidth_bytes_per_second = machine.bandwidth_bytes_per_second;
  c.bandwidth_source = machine.bandwidth_source;
  c.available = roof.available;
  c.missing = roof.missing;
  c.tps = roof.ceiling_tps;
  if (roof.available && mtp) {
    c.mtp_low_tps = roof.ceiling_tps * kMtpMeanAcceptedLow;
    c.mtp_high_tps = roof.ceiling_tps * kMtpMeanAcceptedHigh;
  }
  return c;
}

Expected<WhatFits> plan_what_fits(const LaunchRequest& request, const PlannerContext& context,
                                  const TargetMachine& machine, std::uint32_t max_slots) {
  auto chosen = plan_request(request, context);
  if (!chosen) {
    return chosen.error();
  }
  WhatFits out;
  const model::ModelFacts& model = chosen->draft.model;
  out.training_context = model.context_length;
  out.launch = choice_of(*chosen);
  out.ceiling = decode_ceiling(model.bytes_read_per_token, machine, model.has_mtp());
  for (std::uint32_t slots = 1; slots <= max_slots; ++slots) {
    WhatFitsRow row;
    row.slots = slots;
    for (const auto& [type, cell] : {std::pair{"f16", &row.ctx_f16}, {"q8_0", &row.ctx_q8_0}}) {
      auto ctx = largest_context(request, context, slots, type, out.training_context);
      if (!ctx) {
        const std::string note = fmt::format("KV {}: {}", type, ctx.error().message);
        if (std::find(out.notes.begin(), out.notes.end(), note) == out.notes.end()) {
          out.notes.push_back(note);
        }
        continue;
      }
      *cell = *ctx;
    }
    out.rows.push_back(row);
  }
  return out;
}

}  // namespace gb10tune::launch
