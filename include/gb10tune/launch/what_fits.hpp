// The what-fits answer of a plan before a download (gb10tune plan): for 1…N slots, the largest
// context per slot whose plan fits, with the KV cache f16 and q8_0; the decode ceiling (K12)
// from the machine's bandwidth and the bytes a token reads, times the mean accepted length
// with an MTP head; and what `launch` would choose. Every figure comes from launch's own
// planner (draft_launch, plan_launch) with the model and machine given as stand-ins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/launch/launch_planner.hpp"
#include "gb10tune/launch/target_machine.hpp"

namespace gb10tune::launch {

// One row: `slots` slots.
struct WhatFitsRow {
  std::uint32_t slots = 1;
  // The largest context per slot that fits with the KV cache f16 and q8_0 (K and V both),
  // capped at the model's training context; 0: not even 256 tokens fit; nullopt: that cache
  // type cannot be used (the reason in WhatFits::notes).
  std::optional<std::uint64_t> ctx_f16;
  std::optional<std::uint64_t> ctx_q8_0;
};

// One machine's part of a decode step over RPC.
struct NodeRead {
  std::string node;  // "head" or the worker's host:port
  std::uint64_t bytes = 0;
  double seconds = 0;  // bytes / the machine's bandwidth
};

// The ceiling of one stream at one depth of its context (plan/decode_reads.hpp).
struct DepthCeiling {
  std::uint64_t depth = 0;            // tokens already in the context
  std::uint64_t cache_bytes = 0;      // what the KV cache and recurrent state add to a step's read
  std::uint64_t bytes_per_token = 0;  // the weights + cache_bytes
  double tps = 0;                     // bandwidth / bytes_per_token: one token a step
  double expect_low_tps = 0;          // tps × DecodeExpectation's range
  double expect_high_tps = 0;
};

// What published GB10 runs reached relative to the ceiling, for a kind of model: an
// expectation, not a measurement (docs/plan.md, "What to expect").
struct DecodeExpectation {
  std::string kind;  // "dense", "gpt-oss", "MoE", "MLA", "hybrid"
  double low = 0;    // measured / ceiling, the lower end
  double high = 0;
  std::string basis;  // which published runs
};

// The decode ceiling of one stream.
struct DecodeCeiling {
  bool available = false;
  std::string missing;  // why not, when unavailable
  std::uint64_t bytes_per_token = 0;
  double bandwidth_bytes_per_second = 0;
  std::string bandwidth_source;
  double tps = 0;  // bandwidth / bytes per token
  // With an MTP head: tps × the mean accepted lengths K4 measured (2.88 at the default 3
  // drafted tokens, 3.70 at 4); 0 without one. A bound: a drafting step costs more than one
  // weight read (K12).
  double mtp_low_tps = 0;
  double mtp_high_tps = 0;
  // Over RPC: each machine's share of the bytes (its layers run after the previous machine's,
  // so the step is the sum of their times), and what the ceiling leaves out ("" = nothing).
  std::vector<NodeRead> nodes;
  std::string left_out;
  // The ceiling as the context fills (empty when unavailable or the caches' types are unknown);
  // the first row is depth 0, whose figure counts a hybrid's recurrent state beside `tps`.
  std::vector<DepthCeiling> at_depth;
  DecodeExpectation expect;
  std::string depth_missing;  // why at_depth is empty, when it is
};

// What launch would do with its defaults on that machine.
struct LaunchChoice {
  std::vector<std::string> argv;  // the command it would run
  std::uint32_t slots = 0;
  std::uint64_t ctx_per_slot = 0;  // with kv_unified, the pool every slot may grow into
  bool kv_unified = false;         // -kvu: one pool of ctx_per_slot cells for all slots
  std::string cache_type_k;
  std::string cache_type_v;
  bool mtp = false;
  std::uint64_t total_bytes = 0;
  std::optional<std::uint64_t> available_bytes;
  bool fits = false;
  bool fitted = false;  // the fit lowered what was asked
  // Over RPC: the workers and the plan per node, whose fit decides `fits`; total_bytes and
  // available_bytes are then over all nodes.
  std::optional<render::RpcPreview> rpc;
  plan::PlanConfig config;  // its configuration and memory plan, as launch --dry-run shows them
  plan::MemoryPlan memory;
};

// The whole answer.
struct WhatFits {
  std::uint64_t training_context = 0;
  std::vector<WhatFitsRow> rows;
  DecodeCeiling ceiling;
  LaunchChoice launch;
  std::vector<std::string> notes;
};

// The mean accepted lengths the report measured with an MTP head (K4).
inline constexpr double kMtpMeanAcceptedLow = 2.88;
inline constexpr double kMtpMeanAcceptedHigh = 3.70;

// Plans `request` (the caller's settings; slots, context and cache types are set per row)
// for 1…`max_slots` slots under `context` (its stand_ins set). With stand-in workers (a pair
// over RPC) a cell is the largest context whose plan fits every node, found by a binary search
// over launch plans in steps of 256 tokens, and the ceiling sums the machines. The Errors of the
// planner (a usage Error for bad settings, an unsupported architecture), not a plan that does not
// fit.
Expected<WhatFits> plan_what_fits(const LaunchRequest& request, const PlannerContext& context,
                                  const TargetMachine& machine, std::uint32_t max_slots);

// The ceiling for `bytes_per_token` on `machine`, `mtp` scaling it by K4's range.
DecodeCeiling decode_ceiling(std::uint64_t bytes_per_token, const TargetMachine& machine, bool mtp);

// What published GB10 runs reached against the ceiling for a model like `model` (K12's
// measured/ceiling at depths 0…32768 of llama.cpp's DGX Spark runs, by kind of model).
DecodeExpectation decode_expectation(const model::ModelFacts& model);

// Fills `ceiling.at_depth` (and `expect`) for `model` with cache types `k`/`v` at
// plan::ceiling_depths(context), `context` capped at the training context; unavailable
// ceilings and cache types the model cannot use leave it empty with depth_missing set.
void add_depths(DecodeCeiling& ceiling, const model::ModelFacts& model, gguf::GgmlType k,
                gguf::GgmlType v, std::uint64_t context);

// The ceiling of one launch plan on this machine: `bandwidth` bytes/s read on the decode path
// (the saved probe's device read; nullopt: unknown, said in `missing`), the plan's cache types,
// by depth up to `ctx_per_slot`.
DecodeCeiling plan_ceiling(const model::ModelFacts& model, const plan::PlanConfig& config,
                           std::uint64_t ctx_per_slot, std::optional<double> bandwidth);

// The same for `model` split by layers over `nodes`, each node a machine like `machine`: the
// bytes a token reads split in proportion to each node's blocks of the main stack (the output
// layer included, the token embedding and MTP blocks not), the step the sum of the nodes'
// times. RPC's own cost per token is left out (left_out says so): the project has no measured
// figure for it.
DecodeCeiling decode_ceiling_over_nodes(const model::ModelFacts& model, const rpc::NodePlan& nodes,
                                        const TargetMachine& machine);

}  // namespace gb10tune::launch
