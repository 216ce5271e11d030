// The goal's side of a tune: which figure of a workload run it compares, which request fields a
// candidate sends, and which settings need a restart.
#include <fmt/format.h>

#include "gb10tune/bench/server_metrics.hpp"
#include "gb10tune/tune/tune_runner.hpp"

namespace gb10tune::tune {

std::vector<double> goal_values(Goal goal, const bench::LevelResult& level) {
  if (goal == Goal::throughput) {
    return level.round_totals;
  }
  const bench::Metric metric =
      goal == Goal::prefill ? bench::Metric::ttft_ms : bench::Metric::decode_tps;
  std::vector<double> values;
  values.reserve(level.samples.size());
  for (const bench::RequestSample& sample : level.samples) {
    values.push_back(bench::metric_value(metric, sample.timings).value_or(0));
  }
  return values;
}

std::vector<std::string> goal_requests(Goal goal, const bench::LevelResult& level) {
  std::vector<std::string> names;
  if (goal == Goal::throughput) {
    for (std::size_t i = 0; i < level.round_totals.size(); ++i) {
      names.push_back(fmt::format("round {}", i + 1));
    }
    return names;
  }
  for (const bench::RequestSample& sample : level.samples) {
    names.push_back(sample.request);
  }
  return names;
}

nlohmann::json request_fields(const std::vector<KnobPlan>& knobs, const nlohmann::json& settings,
                              Goal goal) {
  nlohmann::json fields = nlohmann::json::object();
  for (const KnobPlan& plan : knobs) {
    if (plan.knob == nullptr || plan.mode != ApplyMode::per_request || !plan.skipped.empty()) {
      continue;
    }
    const std::string key(plan.knob->setting);
    if (settings.contains(key) && !plan.knob->request_field.empty()) {
      fields[std::string(plan.knob->request_field)] = settings[key];
    }
  }
  if (goal == Goal::prefill) {
    fields["cache_prompt"] = false;
    // The time to the first token is all it compares: one token is answered, not the rest.
    fields["max_tokens"] = 1;
  }
  return fields;
}

nlohmann::json restart_settings(const std::vector<KnobPlan>& knobs,
                                const nlohmann::json& settings) {
  nlohmann::json out = settings;
  for (const KnobPlan& plan : knobs) {
    if (plan.knob != nullptr && plan.mode == ApplyMode::per_request) {
      out.erase(std::string(plan.knob->setting));
    }
  }
  return out;
}

std::string metric_label(Goal goal, int concurrency) {
  switch (goal) {
    case Goal::decode:
      return "decode t/s";
    case Goal::throughput:
      return fmt::format("total decode t/s @{}", concurrency);
    case Goal::prefill:
      return "time to first token ms";
  }
  return "";
}

ExitCode tune_exit_code(const TuneRun& run) {
  if (run.error) {
    return run.error->code;
  }
  switch (run.result.stopped) {
    case StopReason::done:
    case StopReason::budget:
      return ExitCode::ok;
    case StopReason::interrupted:
      return ExitCode::interrupted;
    case StopReason::memory_floor:
    case StopReason::failed:
      return ExitCode::failed;
  }
  return ExitCode::failed;
}

}  // namespace gb10tune::tune
