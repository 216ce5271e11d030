#include "gb10tune/plan/calibration.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::plan {

namespace {

using nlohmann::json;

json optional_json(const std::optional<std::uint64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

std::optional<std::uint64_t> optional_u64(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_number_unsigned()) {
    return std::nullopt;
  }
  return it->get<std::uint64_t>();
}

}  // namespace

std::optional<LogBuffers> parse_buffer_lines(std::string_view log_text) {
  LogBuffers buffers;
  for (const BufferSizeLine& line : buffer_size_lines(log_text)) {
    const std::string_view before = line.before;
    const auto ends_with_word = [&](std::string_view word) {
      return before.size() >= word.size() && before.substr(before.size() - word.size()) == word;
    };
    std::uint64_t* target = nullptr;
    if (ends_with_word("model")) {
      target = &buffers.model_bytes;
      if (!ends_with_word("_Mapped model")) {
        buffers.unmapped_model_bytes += line.bytes;
      }
    } else if (ends_with_word("KV")) {
      target = &buffers.kv_bytes;
    } else if (ends_with_word("RS")) {
      target = &buffers.recurrent_bytes;
    } else if (ends_with_word("compute")) {
      target = &buffers.compute_bytes;
    } else if (ends_with_word("output")) {
      target = &buffers.output_bytes;
    }
    if (target != nullptr) {
      *target += line.bytes;
      ++buffers.lines;
    }
  }
  if (buffers.lines == 0) {
    return std::nullopt;
  }
  return buffers;
}

ProcessReading process_reading(const sys::ProcessMemory& memory, const gpu::NvmlReport& nvml,
                               int pid) {
  ProcessReading reading{.vm_rss = memory.vm_rss,
                         .rss_anon = memory.rss_anon,
                         .rss_file = memory.rss_file,
                         .rss_shmem = memory.rss_shmem,
                         .vm_hwm = memory.vm_hwm,
                         .gpu_bytes = std::nullopt,
                         .log = std::nullopt};
  if (nvml.loaded) {
    std::uint64_t bytes = 0;  // not listed: nothing on the GPU
    for (const gpu::GpuProcessMemory& entry : nvml.processes) {
      bytes += entry.pid == static_cast<std::uint32_t>(pid) ? entry.used_bytes : 0;
    }
    reading.gpu_bytes = bytes;
  }
  return reading;
}

Measurement measure(const MemoryPlan& plan, PlanBackend backend, const ProcessReading& reading) {
  Measurement m;
  m.how = fmt::format("RSS {} (anon {}, file {}, shmem {})", format_bytes(reading.vm_rss),
                      format_bytes(reading.rss_anon), format_bytes(reading.rss_file),
                      format_bytes(reading.rss_shmem));
  if (backend == PlanBackend::cuda) {
    if (!reading.gpu_bytes) {
      m.unknown_because =
          "NVML's per-process figure is not available, and the device buffers are not in the "
          "process's RSS";
      return m;
    }
    m.how += fmt::format(" + NVML per-process {}", format_bytes(*reading.gpu_bytes));
    m.measured_bytes = reading.vm_rss + *reading.gpu_bytes;
    return m;
  }
  std::uint64_t measured = reading.vm_rss;
  // mmapped weights are file-backed; when neither the file pages nor the anonymous ones hold
  // them all, the rest is not resident yet.
  const std::uint64_t weights = plan.weights_bytes + plan.projector_bytes;
  if (reading.rss_file < weights && reading.rss_anon < weights) {
    m.weights_not_resident = weights - reading.rss_file;
    measured += m.weights_not_resident;
    m.how += fmt::format(" + {} of mmapped weights not resident yet",
                         format_bytes(m.weights_not_resident));
  }
  m.measured_bytes = measured;
  return m;
}

bool CalibrationRun::within_tolerance() const {
  const double error = error_percent(planned_bytes, measured_bytes);
  return planned_bytes > 0 && error >= -kPlanTolerancePercent && error <= kPlanTolerancePercent;
}

const CalibrationEntry* CalibrationStore::find(const CalibrationKey& key) const {
  const auto it = std::find_if(entries.begin(), entries.end(),
                               [&](const CalibrationEntry& e) { return e.key == key; });
  return it == entries.end() ? nullptr : &*it;
}

void CalibrationStore::add(const CalibrationKey& key, CalibrationRun run) {
  auto it = std::find_if(entries.begin(), entries.end(),
                         [&](const CalibrationEntry& e) { return e.key == key; });
  CalibrationEntry entry;
  if (it != entries.end()) {
    entry = std::move(*it);
    entries.erase(it);
  } else {
    entry.key = key;
  }
  entry.runs.push_back(std::move(run));
  if (entry.runs.size() > kCalibrationRunsKept) {
    entry.runs.erase(entry.runs.begin(),
                     entry.runs.end() - static_cast<std::ptrdiff_t>(kCalibrationRunsKept));
  }
  entries.push_back(std::move(entry));
  if (entries.size() > kCalibrationKeysKept) {
    entries.erase(entries.begin(),
                  entries.end() - static_cast<std::ptrdiff_t>(kCalibrationKeysKept));
  }
}

std::optional<Correction> correction_for(const CalibrationStore& store, const CalibrationKey& key) {
  const CalibrationEntry* entry = key.shape ? store.find(key) : nullptr;
  if (entry == nullptr) {
    return std::nullopt;
  }
  std::vector<std::int64_t> differences;
  for (const CalibrationRun& run : entry->runs) {
    if (run.plan_model == kCalibrationPlanModel && run.within_tolerance()) {
      differences.push_back(run.difference());
    }
  }
  if (differences.empty()) {
    return std::nullopt;
  }
  std::sort(differences.begin(), differences.end());
  const std::size_t n = differences.size();
  // The median; of an even count, the larger middle value (the safer one).
  Correction c;
  c.bytes = differences[n / 2];
  c.runs = n;
  c.source =
      fmt::format("median of {} measured run(s) of {} on {} ({}), build {}", n, key.architecture,
                  backend_name(key.backend), describe_shape(*key.shape), key.build);
  return c;
}

std::string unapplied_runs_note(const CalibrationStore& store, const CalibrationKey& key) {
  std::size_t unshaped = 0;
  std::size_t other_shapes = 0;
  std::size_t not_learned = 0;
  for (const CalibrationEntry& entry : store.entries) {
    const CalibrationKey& k = entry.key;
    if (k.architecture != key.architecture || k.build != key.build || k.backend != key.backend) {
      continue;
    }
    if (!k.shape) {
      unshaped += entry.runs.size();
    } else if (k == key) {
      for (const CalibrationRun& run : entry.runs) {
        not_learned += run.plan_model != kCalibrationPlanModel || !run.within_tolerance() ? 1 : 0;
      }
    } else {
      ++other_shapes;
    }
  }
  std::vector<std::string> parts;
  if (unshaped > 0) {
    parts.push_back(
        fmt::format("{} run(s) recorded by an older gb10tune without the "
                    "configuration's shape",
                    unshaped));
  }
  if (other_shapes > 0) {
    parts.push_back(fmt::format("the runs of {} other configuration shape(s)", other_shapes));
  }
  if (not_learned > 0) {
    parts.push_back(
        fmt::format("{} run(s) of this shape measured against an older plan or off "
                    "by more than {:.0f}%",
                    not_learned, kPlanTolerancePercent));
  }
  if (parts.empty()) {
    return {};
  }
  return fmt::format(
      "calibration not applied from {} of {} on {} with this build: a correction "
      "comes only from runs of the same shape ({}) within {:.0f}% of their plan",
      fmt::join(parts, ", "), key.architecture, backend_name(key.backend),
      key.shape ? describe_shape(*key.shape) : std::string("unknown"), kPlanTolerancePercent);
}

std::int64_t bounded_correction(const MemoryPlan& plan, PlanBackend backend, std::int64_t learned) {
  const std::uint64_t at_load = uncalibrated_memory(plan, backend).at_load;
  const auto bound =
      static_cast<std::int64_t>(static_cast<double>(at_load) * kCalibrationBoundPercent / 100.0);
  // Below the buffers llama.cpp allocates (its cell metadata included) only the runtime and
  // the margin could be cut.
  const auto cuttable =
      static_cast<std::int64_t>(plan.runtime_bytes - plan.kv_cells_bytes + plan.overhead_bytes);
  return std::clamp(learned, -std::min(bound, cuttable), bound);
}

json store_to_json(const CalibrationStore& store) {
  json entries = json::array();
  for (const CalibrationEntry& entry : store.entries) {
    json runs = json::array();
    for (const CalibrationRun& r : entry.runs) {
      runs.push_back({{"at", r.at},
                      {"planned_bytes", r.planned_bytes},
                      {"measured_bytes", r.measured_bytes},
                      {"difference_bytes", r.difference()},
                      {"on_demand_bytes", r.on_demand_bytes},
                      {"rss_anon_bytes", r.rss_anon},
                      {"rss_file_bytes", r.rss_file},
                      {"rss_shmem_bytes", r.rss_shmem},
                      {"gpu_bytes", optional_json(r.gpu_bytes)},
                      {"log_buffer_bytes", optional_json(r.log_buffer_bytes)},
                      {"ctx_per_slot", r.ctx_per_slot},
                      {"slots", r.slots},
                      {"plan_model", r.plan_model}});
    }
    json doc{{"architecture", entry.key.architecture},
             {"build", entry.key.build},
             {"backend", backend_name(entry.key.backend)}};
    if (entry.key.shape) {
      doc["shape"] = shape_to_json(*entry.key.shape);
    }
    doc["runs"] = runs;
    entries.push_back(doc);
  }
  return {{"schema_version", 1}, {"entries", entries}};
}

Expected<CalibrationStore> store_from_json(const json& doc, const std::string& source) {
  const auto bad = [&](std::string_view what) {
    return Error{fmt::format("calibration file {}: {}; remove it (the next launch records a new "
                             "one)",
                             source, what),
                 ExitCode::failed};
  };
  if (!doc.is_object() || doc.value("schema_version", 0) != 1 || !doc.contains("entries") ||
      !doc["entries"].is_array()) {
    return bad("not a schema_version 1 document with an entries array");
  }
  CalibrationStore store;
  for (const json& e : doc["entries"]) {
    if (!e.is_object() || !e.value("architecture", json()).is_string() ||
        !e.value("build", json()).is_string() || !e.value("backend", json()).is_string() ||
        !e.value("runs", json()).is_array()) {
      return bad("an entry lacks architecture, build, backend or runs");
    }
    CalibrationEntry entry;
    entry.key.architecture = e["architecture"].get<std::string>();
    entry.key.build = e["build"].get<std::string>();
    const auto backend = e["backend"].get<std::string>();
    if (backend != "cpu" && backend != "cuda") {
      return bad(fmt::format("unknown backend '{}'", backend));
    }
    entry.key.backend = backend == "cuda" ? PlanBackend::cuda : PlanBackend::cpu;
    if (e.contains("shape")) {  // absent: recorded by an older gb10tune, kept but not applied
      auto shape = shape_from_json(e["shape"]);
      if (!shape) {
        return bad(shape.error().message);
      }
      entry.key.shape = std::move(*shape);
    }
    for (const json& r : e["runs"]) {
      const auto planned = r.is_object() ? optional_u64(r, "planned_bytes") : std::nullopt;
      const auto measured = r.is_object() ? optional_u64(r, "measured_bytes") : std::nullopt;
      if (!planned || !measured) {
        return bad("a run lacks planned_bytes or measured_bytes");
      }
      CalibrationRun run;
      run.at = r.value("at", std::string());
      run.planned_bytes = *planned;
      run.measured_bytes = *measured;
      run.on_demand_bytes = optional_u64(r, "on_demand_bytes").value_or(0);
      run.rss_anon = optional_u64(r, "rss_anon_bytes").value_or(0);
      run.rss_file = optional_u64(r, "rss_file_bytes").value_or(0);
      run.rss_shmem = optional_u64(r, "rss_shmem_bytes").value_or(0);
      run.gpu_bytes = optional_u64(r, "gpu_bytes");
      run.log_buffer_bytes = optional_u64(r, "log_buffer_bytes");
      run.ctx_per_slot = optional_u64(r, "ctx_per_slot").value_or(0);
      run.slots = static_cast<std::uint32_t>(optional_u64(r, "slots").value_or(0));
      run.plan_model = static_cast<int>(optional_u64(r, "plan_model").value_or(0));
      entry.runs.push_back(std::move(run));
    }
    store.entries.push_back(std::move(entry));
  }
  return store;
}

Expected<CalibrationStore> read_calibration_store(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (ec || status.type() == std::filesystem::file_type::not_found) {
    return CalibrationStore{};
  }
  if (status.type() != std::filesystem::file_type::regular) {
    return Error{fmt::format("calibration file {} is not a regular file (a symlink is not "
                             "followed); remove it",
                             path.string()),
                 ExitCode::failed};
  }
  // Yours and writable by no one else (a planted one would change every plan), else refused.
  const auto text = trust::read_private_file(path);
  if (!text || !*text) {
    return Error{fmt::format("calibration file {} cannot be read ({}); fix it or remove it",
                             path.string(), text ? "it vanished" : text.error().message),
                 ExitCode::failed};
  }
  const json doc = json::parse(**text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Error{fmt::format("calibration file {} is not valid JSON; remove it (the next launch "
                             "records a new one)",
                             path.string()),
                 ExitCode::failed};
  }
  return store_from_json(doc, path.string());
}

Status write_calibration_store(const std::filesystem::path& path, const CalibrationStore& store) {
  return platform::write_file_atomic(path, store_to_json(store).dump(2) + "\n");
}

}  // namespace gb10tune::plan
