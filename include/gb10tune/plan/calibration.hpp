// Calibration: what a started llama-server really holds, compared like with like with the plan
// (expected_memory.hpp), and the correction later plans of the same key (calibration_key.hpp:
// architecture, build, backend and the configuration's shape) apply.
//
// "Measured" per backend:
//  - cpu: the process's resident memory (VmRSS = anonymous + file-backed + shared). Weights
//    loaded through mmap are file-backed pages and may be only partly resident; the part not
//    resident is counted as if it were (the plan assumes the weights are read in full, and a
//    first long prompt does read them), and the measurement says so.
//  - cuda: NVML's per-process figure for the server (device buffers, the CUDA context) plus the
//    host RSS (host copies of mapped tensors, pinned buffers, the heap). Without NVML the
//    figure is unknown and nothing is recorded.
// A run is learned from only when the idle server is within kPlanTolerancePercent of the
// plan's figure at load (ExpectedMemory::at_load, without calibration): a plan further off is
// wrong in a way a constant cannot fix. The correction is absolute (what the formulas miss does
// not grow with the context: the runtime, allocator slack, the heap), the median of the runs of
// the key, and bounded for the plan it is applied to (bounded_correction).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/gpu/gpu_info.hpp"
#include "gb10tune/plan/calibration_key.hpp"
#include "gb10tune/plan/expected_memory.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::plan {

// Runs kept per key and keys kept in the store; the oldest go first.
inline constexpr std::size_t kCalibrationRunsKept = 8;
inline constexpr std::size_t kCalibrationKeysKept = 32;

// The version of what the plan models at load. A run records it, and only runs of the current
// version make a correction: when the plan learns to model more (compute buffers, the CUDA
// runtime), the differences measured against the older plan no longer apply. Bump it then.
// 1: weights, caches and a flat overhead; 2: llama.cpp's compute, output and runtime memory;
// 3: compared like with like (the CPU backend's compute buffers and the output buffers' growth
// are not held by an idle server).
inline constexpr int kCalibrationPlanModel = 3;

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
  std::optional<std::uint64_t> vm_hwm;     // the most resident so far; nullopt: not read
  std::optional<std::uint64_t> gpu_bytes;  // NVML per-process; nullopt: NVML not available
  std::optional<LogBuffers> log;
};

// The reading of process `pid` from its memory figures and, when `nvml` is loaded, the sum of
// its per-process GPU memory (0 when NVML does not list it: nothing on the GPU).
ProcessReading process_reading(const sys::ProcessMemory& memory, const gpu::NvmlReport& nvml,
                               int pid);

// The measured figure of a reading against a plan, per backend (see the file comment).
struct Measurement {
  std::optional<std::uint64_t> measured_bytes;  // nullopt: unknown (why in `unknown_because`)
  std::string unknown_because;
  std::uint64_t weights_not_resident = 0;  // mmapped weights not resident, counted as resident
  std::string how;                         // "RSS 1.2 GiB (anon …, file …)"
};

// Measures `reading` against `plan` for `backend`. The log's buffer lines are not added: they
// are what llama.cpp reserved, not what the process has touched.
Measurement measure(const MemoryPlan& plan, PlanBackend backend, const ProcessReading& reading);

// One measured start.
struct CalibrationRun {
  std::string at;                   // ISO 8601, UTC
  std::uint64_t planned_bytes = 0;  // the plan's figure at load without calibration (at_load)
  std::uint64_t measured_bytes = 0;
  std::uint64_t on_demand_bytes = 0;  // the plan's buffers an idle server has not touched
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
  // Within kPlanTolerancePercent of the plan: a run a correction may come from.
  bool within_tolerance() const;
};

// The runs of one key, oldest first.
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

// The correction for a key.
struct Correction {
  std::int64_t bytes = 0;  // the median of measured − planned over the runs
  std::size_t runs = 0;
  std::string source;  // "median of 3 run(s) of llama on cpu (none offload, …), build …"
};

// The correction of `key` from its runs of the current plan version within the tolerance;
// nullopt when there are none. Runs of another shape, of an older gb10tune (no shape) or
// further off than the tolerance never count.
std::optional<Correction> correction_for(const CalibrationStore& store, const CalibrationKey& key);

// Why runs recorded for the key's architecture, build and backend do not apply to `key`, in one
// sentence for the plan's notes; "" when there are none or they apply.
std::string unapplied_runs_note(const CalibrationStore& store, const CalibrationKey& key);

// The most a correction may move a plan's figure at load, in percent of it.
inline constexpr double kCalibrationBoundPercent = kPlanTolerancePercent;

// `learned` bounded for `plan` on `backend`: at most kCalibrationBoundPercent of the plan's
// figure at load either way, and never so far down that the plan drops below the buffers
// llama.cpp allocates as modelled (weights, projector, KV, recurrent state, compute and output
// buffers): only the runtime and the margin can be learned away.
std::int64_t bounded_correction(const MemoryPlan& plan, PlanBackend backend, std::int64_t learned);

// The store as JSON (schema_version 1) and back; an Error naming `source` for a malformed one.
// Entries without a shape (written by an older gb10tune) are read and kept.
nlohmann::json store_to_json(const CalibrationStore& store);
Expected<CalibrationStore> store_from_json(const nlohmann::json& doc, const std::string& source);

// Reads the store at `path`: an empty store when the file does not exist; an Error naming the
// file (and to remove it) when it is a symlink, unreadable, malformed, or not to be believed
// (another user's, or writable by others: trust::read_private_file).
Expected<CalibrationStore> read_calibration_store(const std::filesystem::path& path);

// Writes the store atomically (0600, no symlink followed).
Status write_calibration_store(const std::filesystem::path& path, const CalibrationStore& store);

}  // namespace gb10tune::plan
