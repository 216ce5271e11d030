// The what-fits table: one launch plan per row and cache type, the largest context per slot
// from the planner's own search (MemoryPlan::max_ctx_per_slot_that_fits; over RPC a search over
// whole plans, every node checked), launch's choice, and the decode ceiling (summed over the
// machines over RPC).
#include "gb10tune/launch/what_fits.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/bench/roofline.hpp"
#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/launch/launch_fit.hpp"
#include "gb10tune/plan/decode_reads.hpp"

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

// With workers: whether the plan of `request` fits every node.
Expected<bool> fits_every_node(const LaunchRequest& request, const PlannerContext& context) {
  auto planned = plan_request(request, context);
  if (!planned) {
    return planned.error();
  }
  return planned->rpc && planned->rpc->nodes.fits;
}

// With workers: the largest context per slot, in steps of 256, whose plan fits every node,
// below `training` (which does not fit); 0 when not even 256 tokens fit.
Expected<std::uint64_t> largest_over_nodes(LaunchRequest request, const PlannerContext& context,
                                           std::uint64_t training) {
  std::uint64_t low = 0;                        // in steps of 256: fits (0: nothing to fit)
  std::uint64_t high = (training + 255) / 256;  // does not fit
  while (high - low > 1) {
    const std::uint64_t mid = low + (high - low) / 2;
    request.values["ctx_per_slot"] = mid * 256;
    auto fits = fits_every_node(request, context);
    if (!fits) {
      return fits.error();
    }
    (*fits ? low : high) = mid;
  }
  return low * 256;
}

// The largest context per slot of `planned` (a row's plan at the training context, which does
// not fit) that launch's fit finds with the row's slots and cache types kept: the context per
// slot and, as launch's fit may (its setting `fit_mode`, the prompt cache's source), the prompt
// cache lowered in the profile's fit_priority order. 0 when nothing fits.
Expected<std::uint64_t> largest_by_the_fit(const LaunchPlan& planned, std::string_view fit_mode) {
  const LaunchDraft& d = planned.draft;
  const auto* kvu = d.flags.find("-kvu");
  const bool build_has_kvu = kvu != nullptr && !kvu->removed();
  plan::FitRequest request =
      launch_fit_request(d.settings, d.built.command, planned.config, build_has_kvu);
  const auto at = [](plan::FitKnob knob) { return static_cast<std::size_t>(knob); };
  request.adjustable[at(plan::FitKnob::ctx_per_slot)] = true;  // what the cell searches
  request.adjustable[at(plan::FitKnob::slots)] = false;        // the row's
  if (fit_mode == "on") {
    request.adjustable[at(plan::FitKnob::cache_ram)] = d.settings.integer("cache_ram_mib") >= 0;
  }
  const auto fitted = plan::fit_plan(d.model, request, planned.budget);
  if (!fitted) {
    return fitted.error().code == ExitCode::memory_refused ? Expected<std::uint64_t>(0)
                                                           : fitted.error();
  }
  return fitted->chosen.ctx_per_slot;
}

// The largest context per slot that fits with `slots` slots and cache type `type`: with the
// fit on (`fit_mode` auto or on, not --force) what launch's fit finds (largest_by_the_fit),
// else the plan as it is.
Expected<std::uint64_t> largest_context(LaunchRequest request, const PlannerContext& context,
                                        std::uint32_t slots, std::string_view type,
                                        std::uint64_t training, std::string_view fit_mode) {
  request.values["slots"] = slots;
  request.values["ctx_per_slot"] = training;
  request.values["cache_type_k"] = std::string(type);
  request.values["cache_type_v"] = std::string(type);
  request.values["fit"] = "off";
  auto planned = plan_request(request, context);
  if (!planned) {
    return planned.error();
  }
  if (const auto& rpc = planned->rpc) {
    if (!rpc->nodes.budgets_known) {
      return Error{"a node's memory is unknown, so nothing can be checked"};
    }
    return rpc->nodes.fits ? training : largest_over_nodes(std::move(request), context, training);
  }
  const plan::MemoryPlan& p = planned->plan;
  if (!budget_known(p)) {
    return Error{"the machine's MemAvailable is unknown, so nothing can be checked"};
  }
  if (p.fits) {
    return training;
  }
  if (fit_mode != "off" && !request.force) {
    return largest_by_the_fit(*planned, fit_mode);
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
  if (p.rpc) {
    c.rpc = p.rpc;
    c.fits = p.rpc->nodes.fits;
    c.total_bytes = p.rpc->nodes.total_bytes;
    c.available_bytes = p.rpc->nodes.budgets_known
                            ? std::optional<std::uint64_t>(p.rpc->nodes.available_bytes)
                            : std::nullopt;
  }
  return c;
}

}  // namespace

DecodeCeiling decode_ceiling(std::uint64_t bytes_per_token, const TargetMachine& machine,
                             bool mtp) {
  bench::RooflineInputs inputs;
  inputs.bytes_per_token = bytes_per_token;
  inputs.bytes_source = "the model's header";
  inputs.bandwidth_bytes_per_second = machine.bandwidth_bytes_per_second;
  inputs.bandwidth_source = machine.bandwidth_source;
  const bench::Roofline roof = bench::compute_roofline(inputs, 0, std::nullopt);
  DecodeCeiling c;
  c.bytes_per_token = bytes_per_token;
  c.bandwidth_bytes_per_second = machine.bandwidth_bytes_per_second;
  c.bandwidth_source = machine.bandwidth_source;
  c.available = roof.available;
  c.missing = roof.missing;
  if (!roof.available && bytes_per_token > 0 && machine.bandwidth_bytes_per_second <= 0) {
    // What this command takes (the roofline's own advice is bench server's): a bench only
    // where this machine has a GPU to run it on.
    c.missing = fmt::format(
        "the decode path's read bandwidth is unknown: give --bandwidth GBPS (the GPU's memory "
        "bandwidth; for a CPU build, the memory's){}{}",
        machine.live ? "" : " or bandwidth_gbps in the machine's description",
        machine.benchable
            ? ", or run `gb10tune probe --quick-bench` once on this machine (its result is saved)"
            : "");
  }
  c.tps = roof.ceiling_tps;
  if (roof.available && mtp) {
    c.mtp_low_tps = roof.ceiling_tps * kMtpMeanAcceptedLow;
    c.mtp_high_tps = roof.ceiling_tps * kMtpMeanAcceptedHigh;
  }
  return c;
}

DecodeExpectation decode_expectation(const model::ModelFacts& model) {
  // measured tg32 / ceiling of llama.cpp's published DGX Spark runs at depth 0, a point per
  // kind; with the cache's read counted it fell by up to 0.04 at depth 32768 (attention over a
  // long cache reads less efficiently than the weights), so the band is −0.05/+0.03 of it.
  constexpr std::string_view kRuns =
      "llama.cpp's llama-bench runs on a DGX Spark (benches/dgx-spark, -fa 1, tg32 at depths "
      "0-32768)";
  const auto kind = [&](std::string name, double point, std::string_view models) {
    return DecodeExpectation{std::move(name), point - 0.05, point + 0.03,
                             fmt::format("{}: {}", kRuns, models)};
  };
  if (model.is_hybrid()) {
    return kind("hybrid", 0.73, "a nemotron_h_moe 120B Q4_K at 0.73");
  }
  if (model.mla) {
    return kind("MLA", 0.78, "a deepseek2 30B-A3B Q8_0 (GLM-4.7-Flash) at 0.78");
  }
  if (model.architecture == "gpt-oss") {
    return kind("gpt-oss", 0.90, "gpt-oss 20B and 120B MXFP4 at 0.89-0.91");
  }
  if (model.is_moe()) {
    return kind("MoE", 0.84, "a qwen3moe 30B-A3B Q8_0 at 0.84");
  }
  return kind("dense", 0.93, "a qwen2 7B Q8_0 and a gemma3 4B Q4_0 at 0.93");
}

void add_depths(DecodeCeiling& ceiling, const model::ModelFacts& model, gguf::GgmlType k,
                gguf::GgmlType v, std::uint64_t context) {
  ceiling.at_depth.clear();
  if (!ceiling.available || ceiling.bandwidth_bytes_per_second <= 0) {
    ceiling.depth_missing = ceiling.missing;
    return;
  }
  if (model.context_length > 0) {
    context = std::min<std::uint64_t>(context, model.context_length);
  }
  ceiling.expect = decode_expectation(model);
  for (const std::uint64_t depth : plan::ceiling_depths(context)) {
    const auto cache = plan::cache_bytes_read_at_depth(model, depth, k, v);
    if (!cache) {
      ceiling.at_depth.clear();
      ceiling.depth_missing = cache.error().message;
      return;
    }
    DepthCeiling row;
    row.depth = depth;
    row.cache_bytes = *cache;
    row.bytes_per_token = ceiling.bytes_per_token + *cache;
    row.tps = ceiling.bandwidth_bytes_per_second / static_cast<double>(row.bytes_per_token);
    row.expect_low_tps = row.tps * ceiling.expect.low;
    row.expect_high_tps = row.tps * ceiling.expect.high;
    ceiling.at_depth.push_back(row);
  }
}

DecodeCeiling plan_ceiling(const model::ModelFacts& model, const plan::PlanConfig& config,
                           std::uint64_t ctx_per_slot, std::optional<double> bandwidth) {
  TargetMachine machine;
  machine.bandwidth_bytes_per_second = bandwidth.value_or(0);
  machine.bandwidth_source = bandwidth ? "the saved probe's device read" : "";
  DecodeCeiling c = decode_ceiling(model.bytes_read_per_token, machine, config.mtp);
  if (!bandwidth) {
    c.missing =
        "device bandwidth unknown: `gb10tune probe --quick-bench` on a machine with an NVIDIA "
        "GPU saves it; `gb10tune plan --bandwidth GBPS` gives the ceiling for a figure of yours";
  }
  add_depths(c, model, config.cache_k, config.cache_v, ctx_per_slot);
  return c;
}

DecodeCeiling decode_ceiling_over_nodes(const model::ModelFacts& model, const rpc::NodePlan& nodes,
                                        const TargetMachine& machine) {
  DecodeCeiling c = decode_ceiling(model.bytes_read_per_token, machine, model.has_mtp());
  c.left_out =
      "what RPC costs per token (the graph when it changes, the hidden state in and out, a few "
      "round trips) is left out: no measured figure (docs/rpc.md estimates about 0.15 ms per "
      "token on a 200 Gb/s link, 4.5 ms on 1 GbE)";
  std::vector<std::uint64_t> stack(nodes.nodes.size(), 0);
  std::uint64_t whole = 0;
  for (std::size_t i = 0; i < nodes.nodes.size(); ++i) {
    const rpc::NodePart& part = nodes.nodes[i];
    const auto add_layers = [&](const std::vector<std::uint32_t>& layers, bool output) {
      for (const std::uint32_t il : layers) {
        const bool mtp = il < model.layers.size() && model.layers[il].mtp;
        stack[i] += !mtp && il < model.layer_weight_bytes.size() ? model.layer_weight_bytes[il] : 0;
      }
      stack[i] += output ? model.output_weight_bytes : 0;
    };
    add_layers(part.layers, part.output_layer);
    for (const plan::DevicePart& gpu : part.gpus) {  // a head's discrete GPUs: on that node
      add_layers(gpu.layers, gpu.output_layer);
    }
    whole += stack[i];
  }
  if (!c.available || whole == 0) {
    return c;
  }
  double seconds = 0;
  std::uint64_t given = 0;
  for (std::size_t i = 0; i < nodes.nodes.size(); ++i) {
    const bool last = i + 1 == nodes.nodes.size();
    const std::uint64_t bytes =
        last ? c.bytes_per_token - given
             : static_cast<std::uint64_t>(static_cast<double>(c.bytes_per_token) *
                                          static_cast<double>(stack[i]) /
                                          static_cast<double>(whole));
    given += bytes;
    const double node_seconds = static_cast<double>(bytes) / c.bandwidth_bytes_per_second;
    c.nodes.push_back({nodes.nodes[i].node, bytes, node_seconds});
    seconds += node_seconds;
  }
  const double scale = seconds > 0 ? 1.0 / seconds / c.tps : 1.0;
  c.tps *= scale;
  c.mtp_low_tps *= scale;
  c.mtp_high_tps *= scale;
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
  out.ceiling = chosen->rpc ? decode_ceiling_over_nodes(model, chosen->rpc->nodes, machine)
                            : decode_ceiling(model.bytes_read_per_token, machine, model.has_mtp());
  add_depths(out.ceiling, model, chosen->config.cache_k, chosen->config.cache_v,
             out.launch.ctx_per_slot);
  for (std::uint32_t slots = 1; slots <= max_slots; ++slots) {
    WhatFitsRow row;
    row.slots = slots;
    for (const auto& [type, cell] : {std::pair{"f16", &row.ctx_f16}, {"q8_0", &row.ctx_q8_0}}) {
      auto ctx = largest_context(request, context, slots, type, out.training_context,
                                 chosen->draft.settings.text("fit"));
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
