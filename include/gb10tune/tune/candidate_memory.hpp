// How tune checks a candidate's memory before it starts it (docs/tune.md "Memory"). A candidate
// that changes no knob of the memory plan (knob_table's memory_effect) takes what the start
// took: it is planned only to build its command and never refused for memory. One that does is
// planned against MemAvailable plus what stopping the running server gives back, with the
// start's prompt cache, which launch's fit may have raised to fill the budget: when only that
// prompt cache keeps it from fitting, it runs with the cache lowered by what is missing, and
// says so; otherwise it is refused, saying what it would need.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/sys/process_info.hpp"

namespace gb10tune::tune {

// The knobs that change the memory plan (knob_table's memory_effect) whose value in `candidate`
// differs from `start` (both: setting → value), in table order; a knob absent from `candidate`
// is at its start.
std::vector<std::string> memory_knobs_changed(const nlohmann::json& start,
                                              const nlohmann::json& candidate);

// What stopping a server gives back to MemAvailable: its anonymous pages (a CPU build's KV
// cache, compute buffers and prompt cache, weights loaded without mmap; GB10's managed memory),
// its shared memory and its page tables. The pages of a mapped model file stay in the page
// cache, which MemAvailable counts already.
std::uint64_t freed_when_stopped(const sys::ProcessMemory& memory);

// A memory-changing candidate's plan, made with the start's prompt cache.
struct CandidatePlanFigures {
  bool fits = false;
  std::uint64_t need_bytes = 0;       // the plan's total
  std::uint64_t available_bytes = 0;  // what it may use: MemAvailable + freed − reserve
  std::int64_t margin_bytes = 0;      // available − need (the host's, with discrete GPUs)
  std::uint64_t reserve_bytes = 0;
  std::uint64_t freed_bytes = 0;  // what the running server gives back (counted in available)
  // The prompt cache's limit in the plan (--cache-ram); 0 when off or unbounded (-1), which is
  // never lowered.
  std::uint64_t cache_ram_bytes = 0;
  std::string refusal;  // launch's own sentence when it does not fit ("… What fits: …")
};

// What tune does with a candidate's memory.
enum class MemoryVerdict {
  unchanged,    // no knob of the memory plan changed: not re-fitted, never refused
  fits,         // re-planned, fits with the start's prompt cache
  lower_cache,  // fits once its prompt cache is lowered to cache_ram_mib
  refused,      // does not fit even with its prompt cache off: never started
};

// The verdict, and what it says.
struct CandidateMemory {
  MemoryVerdict verdict = MemoryVerdict::unchanged;
  std::int64_t cache_ram_mib = 0;  // lower_cache: the prompt cache to run it with
  // lower_cache: the note ("draft_n_max 5: … runs with --cache-ram 120 instead of 152 …");
  // refused: the refusal, with what it needs and what would make it fit.
  std::string text;
};

// The verdict on the candidate `label` ("draft_n_max 5") that changes `changed` (the memory
// knobs memory_knobs_changed found) with `plan` (ignored when `changed` is empty).
CandidateMemory judge_candidate_memory(const std::vector<std::string>& changed,
                                       const CandidatePlanFigures& plan, std::string_view label);

}  // namespace gb10tune::tune
