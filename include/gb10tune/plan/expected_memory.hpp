// What a plan says a running llama-server holds, compared like with like with a measurement.
//
// A process holds only the pages it has touched (llama.cpp 3f545be, checked on the CPU build):
//  - touched once loaded: the weights (mmapped with MAP_POPULATE, or read into anonymous
//    memory; the projector's too), the KV cache and the recurrent state
//    (ggml_backend_buffer_clear: memset over the whole buffer when the cache is created), the
//    output buffers at their start size (cleared too) and the process's runtime;
//  - touched only as batches use them: on the CPU backend the compute buffers (malloc'd by ggml
//    and never cleared: a batch writes as far as its graph reaches, and the attention mask grows
//    with the context in use), a projector's compute buffer in host memory (its warm-up only
//    reserves the graph), and on every backend the output buffers' growth (reallocated at the
//    first decode that needs more rows), and on CUDA what the runtime loads with the first long
//    prompts (cuBLAS's handle, workspace and kernels, the memory pool). CUDA's compute buffers
//    are device memory (NVML counts them when allocated) or pinned host memory (touched when
//    pinned).
// docs/memory-plan.md ("Calibration") has the measurements behind this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gb10tune/plan/memory_plan.hpp"

namespace gb10tune::plan {

// How far a measured process may be from its plan, either way, in percent; the same for
// launch (what it learns from) and verify (what it passes).
inline constexpr double kPlanTolerancePercent = 5.0;

// The plan's figures for a running server, in bytes.
struct ExpectedMemory {
  std::uint64_t at_load = 0;       // a loaded, idle server holds this
  std::uint64_t on_demand = 0;     // touched as batches use them, on top of at_load
  std::uint64_t prompt_cache = 0;  // --cache-ram: fills with use, on top of both

  // The plan's figure at load (MemoryPlan::load_bytes, with the calibration when applied).
  std::uint64_t full() const { return at_load + on_demand; }
  // The most the process may hold: every buffer touched and the prompt cache full.
  std::uint64_t ceiling() const { return full() + prompt_cache; }
};

// The error of a plan's figure against a measurement, in percent of the plan:
// (measured − planned) / planned × 100; 0 when planned is 0.
double error_percent(std::uint64_t planned, std::uint64_t measured);

// The figures of `plan` on `backend` with its calibration applied to the part held at load
// (the correction is learned there; never below 0).
ExpectedMemory expected_memory(const MemoryPlan& plan, PlanBackend backend);

// The same without the calibration: what launch compares an idle server with to learn one.
ExpectedMemory uncalibrated_memory(const MemoryPlan& plan, PlanBackend backend);

// Where a measurement falls.
enum class MemoryVerdict {
  matches,  // within the tolerance of [at_load, ceiling]
  above,    // over the ceiling by more than the tolerance: the plan is too small
  below,    // under the figure at load by more than the tolerance: the plan is far above
};

// The verdict in words, the same in launch's check of the server it started and in verify's
// plan-vs-measured finding: "the memory plan matches the process", "the process holds more
// than its memory plan", "the memory plan is far above the process".
std::string_view memory_verdict_summary(MemoryVerdict verdict);

// A measurement against expected memory.
struct MemoryJudgement {
  MemoryVerdict verdict = MemoryVerdict::matches;
  double error_percent = 0.0;  // (measured − at_load) / at_load × 100
  std::string evidence;        // the figures, one sentence, ending with why when not matched
};

// Judges `measured` (resident now) and `peak` (the most resident so far, VmHWM; nullopt:
// unknown) against `expected`: below when `measured` is under at_load by more than the
// tolerance, above when the larger of both is over the ceiling by more. `how` says how
// `measured` was read ("RSS …"); `at_load_note` follows the figure at load in the evidence.
// Never fails.
MemoryJudgement judge_memory(const ExpectedMemory& expected, std::uint64_t measured,
                             std::optional<std::uint64_t> peak, const std::string& how,
                             const std::string& at_load_note = {});

}  // namespace gb10tune::plan
