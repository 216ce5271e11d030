#include "gb10tune/plan/start_check.hpp"

#include <fmt/format.h>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::plan {

namespace {

using nlohmann::json;

std::string_view verdict_name(MemoryVerdict verdict) {
  switch (verdict) {
    case MemoryVerdict::above:
      return "above";
    case MemoryVerdict::below:
      return "below";
    case MemoryVerdict::matches:
      break;
  }
  return "matches";
}

std::int64_t calibrated_load(const MemoryPlan& plan) {
  const std::int64_t value = static_cast<std::int64_t>(plan.load_bytes()) + plan.calibration_bytes;
  return value < 0 ? 0 : value;
}

}  // namespace

StartCheck check_started_server(const MemoryPlan& plan, PlanBackend backend,
                                const ProcessReading& reading, std::uint32_t slots,
                                const std::string& at) {
  StartCheck check;
  check.measurement = measure(plan, backend, reading);
  check.expected = expected_memory(plan, backend);
  check.uncalibrated = uncalibrated_memory(plan, backend);
  check.reading = reading;
  if (!check.measurement.measured_bytes) {
    check.not_learned_because = "the measurement is unknown";
    return check;
  }
  const std::uint64_t measured = *check.measurement.measured_bytes;
  CalibrationRun& run = check.run;
  run.at = at;
  run.planned_bytes = check.uncalibrated.at_load;
  run.measured_bytes = measured;
  run.on_demand_bytes = check.uncalibrated.on_demand;
  run.rss_anon = reading.rss_anon;
  run.rss_file = reading.rss_file;
  run.rss_shmem = reading.rss_shmem;
  run.gpu_bytes = reading.gpu_bytes;
  if (reading.log) {
    run.log_buffer_bytes = reading.log->total();
  }
  run.ctx_per_slot = plan.ctx_per_slot;
  run.slots = slots;
  if (plan.estimate) {
    // Nothing to learn from: the plan did not model the caches or buffers of this
    // architecture, so the difference is not a correction of a model.
    check.not_learned_because = "the plan was an estimate";
    return check;
  }
  check.judgement = judge_memory(check.expected, measured, reading.vm_hwm, check.measurement.how);
  check.uncalibrated_error_percent = error_percent(check.uncalibrated.at_load, measured);
  check.learn = run.within_tolerance();
  if (!check.learn) {
    // Said with the verdict verify gives the same figure (judge_memory's): a plan that holds
    // is never called a miss here.
    check.not_learned_because =
        check.judgement->verdict == MemoryVerdict::matches
            ? fmt::format(
                  "the idle server is {:+.1f}% off the plan's figure at load without "
                  "calibration: the plan holds (the verdict above, verify's too), but a "
                  "correction is learned only from a run within {:.0f}% of that figure",
                  check.uncalibrated_error_percent, kPlanTolerancePercent)
            : fmt::format(
                  "the idle server is {:+.1f}% off the plan's figure at load without "
                  "calibration, more than the {:.0f}% a correction may come from: the plan "
                  "misses something that a constant would not fix",
                  check.uncalibrated_error_percent, kPlanTolerancePercent);
  }
  return check;
}

std::string describe_start_check(const StartCheck& check, const MemoryPlan& plan) {
  const Measurement& m = check.measurement;
  if (!m.measured_bytes) {
    return fmt::format("memory: {}; measured total unknown: {}", m.how, m.unknown_because);
  }
  if (!check.judgement) {
    return fmt::format(
        "memory: measured {} ({}); the plan was an estimate (weights and runtime {}, "
        "--overhead {} for the rest), so it is neither judged nor recorded as calibration",
        format_bytes(*m.measured_bytes), m.how, format_bytes(plan.load_bytes()),
        format_bytes(plan.overhead_bytes));
  }
  std::string line = fmt::format("memory: {}: {}", memory_verdict_summary(check.judgement->verdict),
                                 check.judgement->evidence);
  if (plan.calibration_bytes != 0) {
    line += fmt::format(" (without the calibration {:+.1f}%)", check.uncalibrated_error_percent);
  }
  if (check.reading.log) {
    line += fmt::format("; the log's buffers {}", format_bytes(check.reading.log->total()));
  }
  if (!check.learn) {
    line += "; not recorded as calibration: " + check.not_learned_because;
  }
  return line;
}

json start_check_to_json(const StartCheck& check, const MemoryPlan& plan,
                         const CalibrationKey& key) {
  json key_doc{{"architecture", key.architecture},
               {"build", key.build},
               {"backend", backend_name(key.backend)},
               {"shape", key.shape ? shape_to_json(*key.shape) : json(nullptr)}};
  json doc{{"key", key_doc},
           {"planned_load_bytes", plan.load_bytes()},
           {"calibration_bytes", plan.calibration_bytes},
           {"calibrated_load_bytes", calibrated_load(plan)},
           {"expected_at_load_bytes", check.expected.at_load},
           {"on_demand_bytes", check.expected.on_demand},
           {"learn", check.learn}};
  const Measurement& m = check.measurement;
  doc["measured_bytes"] = m.measured_bytes ? json(*m.measured_bytes) : json(nullptr);
  if (!m.measured_bytes) {
    doc["unknown_because"] = m.unknown_because;
  }
  const ProcessReading& r = check.reading;
  doc["rss_bytes"] = r.vm_rss;
  doc["rss_anon_bytes"] = r.rss_anon;
  doc["rss_file_bytes"] = r.rss_file;
  doc["rss_shmem_bytes"] = r.rss_shmem;
  doc["peak_rss_bytes"] = r.vm_hwm ? json(*r.vm_hwm) : json(nullptr);
  doc["gpu_bytes"] = r.gpu_bytes ? json(*r.gpu_bytes) : json(nullptr);
  doc["weights_not_resident_bytes"] = m.weights_not_resident;
  if (check.judgement) {
    doc["error_percent"] = check.judgement->error_percent;
    doc["uncalibrated_error_percent"] = check.uncalibrated_error_percent;
    doc["verdict"] = verdict_name(check.judgement->verdict);
  }
  if (!check.learn) {
    doc["why_not_recorded"] = check.not_learned_because;
  }
  if (r.log) {
    const LogBuffers& log = *r.log;
    doc["log_buffers"] = {
        {"model_bytes", log.model_bytes},         {"kv_bytes", log.kv_bytes},
        {"recurrent_bytes", log.recurrent_bytes}, {"compute_bytes", log.compute_bytes},
        {"output_bytes", log.output_bytes},       {"total_bytes", log.total()}};
  } else {
    doc["log_buffers"] = nullptr;  // default verbosity prints none (K20); -lv 4 does
  }
  return doc;
}

Expected<std::size_t> record_calibration_run(const std::filesystem::path& path,
                                             const CalibrationKey& key, const CalibrationRun& run) {
  auto store = read_calibration_store(path);
  if (!store) {
    return store.error();
  }
  store->add(key, run);
  const std::size_t runs = store->find(key)->runs.size();
  if (auto saved = write_calibration_store(path, *store); !saved) {
    return saved.error();
  }
  return runs;
}

}  // namespace gb10tune::plan
