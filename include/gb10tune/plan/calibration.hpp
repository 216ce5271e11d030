// Calibration: what a started llama-server really holds, compared with the plan, and the
// correction later plans of the same (architecture, build, backend) apply.
//
// "Measured" per backend:
//  - cpu: the process's resident memory (VmRSS = anonymous + file-backed + shared). Weights
//    loaded through mmap are file-backed pages and may be only partly resident; the part not
//    resident is counted as if it were (the plan assumes the weights are read in full, and a
//    first long prompt does read them), and the measurement says so. Likewise, when the log
//    lists the buffers (-lv 4), anonymous buffers allocated but not yet touched (the compute
//    buffer's pages are touched by the first full batch) are counted in full; the model
//    buffers other than the mapped file (the repacked copy CPU_REPACK, the weights loaded
//    without mmap) are among the anonymous buffers.
//  - cuda: NVML's per-process figure for the server (device buffers, the CUDA context) plus the
//    host RSS (host copies of mapped tensors, pinned buffers, the heap). Without NVML the
//    figure is unknown and nothing is recorded.
// The correction is absolute: measured − planned at load (MemoryPlan::load_bytes), the median of
// the last runs recorded for the triple. Weights and caches are byte-exact in the plan and
// scale with the configuration; what is left (compute buffers beyond the model, the runtime,
// allocator slack, the heap) does not grow with context or slots, so bytes carry over between
// configurations where a ratio would not.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::plan {

// Runs kept per triple and triples kept in the store; the oldest go first.
inline constexpr std::size_t kCalibrationRunsKept = 8;
inline constexpr std::size_t kCalibrationKeysKept = 32;

// The version of what the plan models at load. A run records it, and only runs of the current
// version make a correction: when the plan learns to model more (compute buffers, the CUDA
// runtime), the differences measured against the older plan no longer apply. Bump it then.
// 1: weights, caches and a flat overhead; 2: llama.cpp's compute, output and runtime memory.
inline constexpr int kCalibrationPlanModel = 2;

// What a calibration is learned for.
struct CalibrationKey {
  std::string architecture;  // general.architecture: "llama", "qwen35"
  std::string build;         // the llama-server build (see launch's build_identity)
  PlanBackend backend = PlanBackend::cpu;

  bool operator==(const CalibrationKey&) const = default;
};

// The buffer sizes llama-server printed at -lv 4 (K18), in bytes; absent kinds are 0.
struct LogBuffers {
  std::uint64_t model_bytes = 0;  // "... model buffer size = ..."
  // The model buffers not backed by the file (all but "CPU_Mapped"): the repacked copy
  // (CPU_REPACK), and the weights themselves when loaded without mmap (also in model_bytes)
  std::uint64_t unmapped_model_bytes = 0;
  std::uint64_t kv_bytes = 0;         // "llama_kv_cache: ... KV buffer size = ..."
  std::uint64_t recurrent_bytes = 0;  // "llama_memory_recurrent: ... RS buffer size = ..."
  std::uint64_t compute_bytes = 0;    // "... compute buffer size = ..."
  std::uint64_t output_bytes = 0;     // "...  output buffer size = ..."
  int lines = 0;                      // buffer lines found

  std::uint64_t total() const {
    return model_bytes + kv_bytes + recurrent_bytes + compute_bytes + output_bytes;
  }
};

// The buffer lines of one start's log text; nullopt when it has none (default verbosity).
std::optional<LogBuffers> parse_buffer_lines(std::string_view log_text);

// What was read of the running server.
struct ProcessReading {
  std::uint64_t vm_rss = 0;
  std::uint64_t rss_anon = 0;
  std::uint64_t rss_file = 0;
  std::uint64_t rss_shmem = 0;
  std::optional<std::uint64_t> gpu_bytes;  // NVML per-process; nullopt: NVML not available
  std::optional<LogBuffers> log;
};

// The measured figure of a reading against a plan, per backend (see the file comment).
struct Measurement {
  std::optional<std::uint64_t> measured_bytes;  // nullopt: unknown (why in `unknown_because`)
  std::string unknown_because;
  std::uint64_t weights_not_resident = 0;  // mmapped weights not resident, counted as resident
  std::uint64_t buffers_not_touched = 0;   // the log's KV/compute/output/RS buffers beyond RssAnon
  std::string how;                         // "RSS 1.2 GiB (anon …, file …)"
};

// Measures `reading` against `plan` for `backend`.
Measurement measure(const MemoryPlan& plan, PlanBackend backend, const ProcessReading& reading);

// The error of a plan's figure against a measurement, in percent of the plan:
// (measured − planned) / planned × 100; 0 when planned is 0.
double error_percent(std::uint64_t planned, std::uint64_t measured);

// One measured start.
struct CalibrationRun {
  std::string at;                   // ISO 8601, UTC
  std::uint64_t planned_bytes = 0;  // MemoryPlan::load_bytes(), without any calibration
  std::uint64_t measured_bytes = 0;
  std::uint64_t rss_anon = 0;
  std::uint64_t rss_file = 0;
  std::uint64_t rss_shmem = 0;
  std::optional<std::uint64_t> gpu_bytes;
  std::optional<std::uint64_t> log_buffer_bytes;  // the log's buffer lines, summed
  std::uint64_t ctx_per_slot = 0;
  std::uint32_t slots = 0;
  int plan_model = kCalibrationPlanModel;  // the plan version `planned_bytes` came from

  // measured − planned.
  std::int64_t difference() const {
    return static_cast<std::int64_t>(measured_bytes) - static_cast<std::int64_t>(planned_bytes);
  }
};

// The runs of one triple, oldest first.
struct CalibrationEntry {
  CalibrationKey key;
  std::vector<CalibrationRun> runs;
};

// Everything recorded (the file calibration.json in the state directory).
struct CalibrationStore {
  std::vector<CalibrationEntry> entries;  // least recently measured first

  // The entry of `key`, nullptr when there is none.
  const CalibrationEntry* find(const CalibrationKey& key) const;
  // Appends `run` to the entry of `key` (made when new), which becomes the most recent; keeps
  // the last kCalibrationRunsKept runs and kCalibrationKeysKept entries.
  void add(const CalibrationKey& key, CalibrationRun run);
};

// The correction for a triple.
struct Correction {
  std::int64_t bytes = 0;  // the median of measured − planned over the runs
  std::size_t runs = 0;
  std::string source;  // "median of 3 run(s) of llama on cpu, build …"
};

// The correction of `key` from its runs of the current plan version; nullopt when there are
// none.
std::optional<Correction> correction_for(const CalibrationStore& store, const CalibrationKey& key);

// The store as JSON (schema_version 1) and back; an Error naming `source` for a malformed one.
nlohmann::json store_to_json(const CalibrationStore& store);
Expected<CalibrationStore> store_from_json(const nlohmann::json& doc, const std::string& source);

// Reads the store at `path`: an empty store when the file does not exist; an Error naming the
// file (and to remove it) when it is a symlink, unreadable or malformed.
Expected<CalibrationStore> read_calibration_store(const std::filesystem::path& path);

// Writes the store atomically (0600, no symlink followed).
Status write_calibration_store(const std::filesystem::path& path, const CalibrationStore& store);

}  // namespace gb10tune::plan
