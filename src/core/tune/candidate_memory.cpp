#include "gb10tune/tune/candidate_memory.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gb10tune/tune/knobs.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::tune {

namespace {

constexpr std::uint64_t kCandidateMiB = 1ull << 20;

// "MemAvailable 3.20 GiB now + 1.10 GiB the running server gives back − the reserve 4.00 GiB".
std::string candidate_budget_text(const CandidatePlanFigures& p) {
  const std::uint64_t with_reserve = p.available_bytes + p.reserve_bytes;
  const std::uint64_t mem_available =
      with_reserve > p.freed_bytes ? with_reserve - p.freed_bytes : 0;
  return fmt::format(
      "MemAvailable {} now + {} the running server gives back when it stops − "
      "the reserve {}",
      format_bytes(mem_available), format_bytes(p.freed_bytes), format_bytes(p.reserve_bytes));
}

}  // namespace

std::vector<std::string> memory_knobs_changed(const nlohmann::json& start,
                                              const nlohmann::json& candidate) {
  std::vector<std::string> changed;
  for (const Knob& knob : knob_table()) {
    const std::string key(knob.setting);
    if (!knob.memory_effect || !candidate.is_object() || !candidate.contains(key)) {
      continue;
    }
    const bool started = start.is_object() && start.contains(key);
    if (!started || start[key] != candidate[key]) {
      changed.push_back(key);
    }
  }
  return changed;
}

std::uint64_t freed_when_stopped(const sys::ProcessMemory& memory) {
  return memory.rss_anon + memory.rss_shmem + memory.vm_pte;
}

CandidateMemory judge_candidate_memory(const std::vector<std::string>& changed,
                                       const CandidatePlanFigures& plan, std::string_view label) {
  CandidateMemory out;
  if (changed.empty()) {
    return out;  // the start's plan: it runs (or ran) in this memory already
  }
  if (plan.fits) {
    out.verdict = MemoryVerdict::fits;
    return out;
  }
  out.verdict = MemoryVerdict::refused;
  if (plan.margin_bytes >= 0) {
    // The host part fits: a GPU's does not, which no prompt cache changes.
    out.text = fmt::format("{} changes the memory plan ({}): {}", label, fmt::join(changed, ", "),
                           plan.refusal);
    return out;
  }
  const auto short_by = static_cast<std::uint64_t>(-plan.margin_bytes);
  // The prompt cache launch's fit may have raised to fill the budget: lowered by what is
  // missing, rounded down to whole MiB as --cache-ram takes it.
  if (plan.cache_ram_bytes >= short_by) {
    out.verdict = MemoryVerdict::lower_cache;
    out.cache_ram_mib =
        static_cast<std::int64_t>((plan.cache_ram_bytes - short_by) / kCandidateMiB);
    out.text = fmt::format(
        "{}: its plan ({} changed) is {} short of the {} it may use ({}) with the start's "
        "prompt cache, which launch's fit may have raised to fill the budget; it runs with "
        "--cache-ram {} instead of {} (the prompt cache's limit, the one other change)",
        label, fmt::join(changed, ", "), format_bytes(short_by), format_bytes(plan.available_bytes),
        candidate_budget_text(plan), out.cache_ram_mib, plan.cache_ram_bytes / kCandidateMiB);
    return out;
  }
  const std::uint64_t without_cache = plan.need_bytes - plan.cache_ram_bytes;
  const std::uint64_t missing = short_by - plan.cache_ram_bytes;
  const std::string reserve =
      plan.reserve_bytes > missing
          ? fmt::format(", or with --reserve {} (at your own risk: an over-commit freezes a GB10)",
                        format_bytes(plan.reserve_bytes - missing))
          : std::string();
  out.text = fmt::format(
      "{} does not fit in memory ({} changed): it needs {}{}, {} more than the {} it may use "
      "({}); it would fit with {} more memory available{}; {}",
      label, fmt::join(changed, ", "), format_bytes(without_cache),
      plan.cache_ram_bytes > 0 ? " even with its prompt cache off" : "", format_bytes(missing),
      format_bytes(plan.available_bytes), candidate_budget_text(plan), format_bytes(missing),
      reserve, plan.refusal);
  return out;
}

}  // namespace gb10tune::tune
