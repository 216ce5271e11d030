#include "gb10tune/plan/expected_memory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::plan {

double error_percent(std::uint64_t planned, std::uint64_t measured) {
  if (planned == 0) {
    return 0.0;
  }
  return (static_cast<double>(measured) - static_cast<double>(planned)) /
         static_cast<double>(planned) * 100.0;
}

ExpectedMemory uncalibrated_memory(const MemoryPlan& plan, PlanBackend backend) {
  ExpectedMemory expected;
  const std::uint64_t growth =
      plan.output_bytes - std::min(plan.output_bytes, plan.buffers.output_at_start());
  // The CPU backend's compute buffers are plain heap memory; CUDA's are counted when allocated.
  // The projector's warm-up only reserves its graph: a compute buffer in host memory (and the
  // input image's beside a GPU tower) is touched by the first image.
  std::uint64_t projector = 0;
  if (plan.projector) {
    projector = plan.projector->host_compute_bytes +
                (plan.projector->on_device ? 0 : plan.projector->compute_bytes);
  }
  // A CUDA server loads cuBLAS and grows its memory pool with its first long prompts.
  expected.on_demand = growth + projector + (backend == PlanBackend::cpu ? plan.compute_bytes : 0) +
                       plan.runtime.after_first_prompts();
  const std::uint64_t load = plan.load_bytes();
  expected.on_demand = std::min(expected.on_demand, load);
  expected.at_load = load - expected.on_demand;
  expected.prompt_cache = plan.cache_ram_bytes;
  return expected;
}

ExpectedMemory expected_memory(const MemoryPlan& plan, PlanBackend backend) {
  ExpectedMemory expected = uncalibrated_memory(plan, backend);
  const std::int64_t at_load = static_cast<std::int64_t>(expected.at_load) + plan.calibration_bytes;
  expected.at_load = at_load < 0 ? 0 : static_cast<std::uint64_t>(at_load);
  return expected;
}

std::string_view memory_verdict_summary(MemoryVerdict verdict) {
  switch (verdict) {
    case MemoryVerdict::above:
      return "the process holds more than its memory plan";
    case MemoryVerdict::below:
      return "the memory plan is far above the process";
    case MemoryVerdict::matches:
      break;
  }
  return "the memory plan matches the process";
}

MemoryJudgement judge_memory(const ExpectedMemory& expected, std::uint64_t measured,
                             std::optional<std::uint64_t> peak, const std::string& how,
                             const std::string& at_load_note) {
  MemoryJudgement j;
  j.error_percent = error_percent(expected.at_load, measured);
  j.evidence = fmt::format("plan at load {}{}", format_bytes(expected.at_load), at_load_note);
  if (expected.on_demand > 0) {
    j.evidence += fmt::format(
        ", {} with the {} of buffers (and, on CUDA, cuBLAS and its memory pool) a process "
        "touches only as batches use them",
        format_bytes(expected.full()), format_bytes(expected.on_demand));
  }
  j.evidence += fmt::format("; measured {} ({})", format_bytes(measured), how);
  if (peak && *peak > measured) {
    j.evidence += fmt::format(", peak {}", format_bytes(*peak));
  }
  j.evidence += fmt::format(": error {:+.1f}%", j.error_percent);
  const double tolerance = kPlanTolerancePercent / 100.0;
  const std::uint64_t highest = std::max(measured, peak.value_or(0));
  if (static_cast<double>(highest) > static_cast<double>(expected.ceiling()) * (1.0 + tolerance)) {
    j.verdict = MemoryVerdict::above;
    j.evidence +=
        fmt::format(": the process holds more than the plan allowed ({:+.1f}% over {})",
                    error_percent(expected.ceiling(), highest), format_bytes(expected.ceiling()));
  } else if (j.error_percent < -kPlanTolerancePercent) {
    j.verdict = MemoryVerdict::below;
    j.evidence += fmt::format(
        ": the plan is far above the process (more than {:.0f}% below the figure at load): a "
        "safe plan, but a wrong one",
        kPlanTolerancePercent);
  } else if (j.error_percent > kPlanTolerancePercent) {
    j.evidence += ": more than at load, within what batches and the prompt cache may add";
  }
  if (expected.prompt_cache > 0) {
    j.evidence += fmt::format("; the prompt cache may add up to {} as it fills",
                              format_bytes(expected.prompt_cache));
  }
  return j;
}

}  // namespace gb10tune::plan
