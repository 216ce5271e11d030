// What `launch` leaves behind for `verify`, `stop` and `bench server`: the launch record
// (JSON) and the paths of the pid file, lock and log under the state directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/launch/recorded_plan.hpp"
#include "gb10tune/server/rules.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// The files of one launched server under the state directory.
struct StatePaths {
  std::filesystem::path record;    // launch.json
  std::filesystem::path pid_file;  // llama-server.pid
  std::filesystem::path lock;      // launch.lock
  std::filesystem::path log;       // llama-server.log

  // The paths under `state_dir` ($XDG_STATE_HOME/gb10tune).
  static StatePaths under(const std::filesystem::path& state_dir);
};

// A started server and the plan it was started with.
struct LaunchRecord {
  int pid = 0;
  std::uint64_t start_time_ticks = 0;    // field 22 of /proc/<pid>/stat: tells a reused pid apart
  std::string server_path;               // absolute path of the llama-server binary
  std::vector<std::string> argv;         // exactly what was executed
  std::vector<std::string> env_removed;  // variables taken out of the child's environment
  std::string url;                       // "http://127.0.0.1:8080"
  std::string log_path;
  std::string model_path;
  std::string mmproj_path;  // "" without a projector
  std::string launched_at;  // ISO 8601, UTC
  std::string gb10tune_version;
  // Started by `launch --foreground`: a service manager (systemd, llama-swap) owns the process
  // and starts it again itself.
  bool foreground = false;

  // The settings launch chose (what verify compares the running process against).
  std::uint32_t slots = 1;
  std::uint64_t ctx_per_slot = 0;
  bool kv_unified = false;
  bool mtp = false;
  std::uint32_t draft_n_max = 0;
  std::int64_t cache_ram_mib = 0;

  // The model and the memory plan's expectations, in bytes.
  std::string architecture;
  bool model_has_mtp = false;
  std::uint32_t model_layers = 0;
  std::uint64_t bytes_per_token = 0;  // weights read per decoded token (the roofline's input)
  std::uint64_t expected_weights_bytes = 0;
  std::uint64_t expected_kv_bytes = 0;  // KV + recurrent state
  std::uint64_t expected_total_bytes = 0;
  // What the process should hold once loaded: the plan's load figure plus its calibration (0:
  // not recorded, a record of an older gb10tune); and the prompt cache's limit on top.
  std::uint64_t expected_load_bytes = 0;
  // The part of expected_load_bytes a process touches only as batches use it (the CPU backend's
  // compute buffers, the output buffers' growth: plan/expected_memory.hpp); nullopt: not
  // recorded (a record of an older gb10tune, or a head of an RPC plan).
  std::optional<std::uint64_t> expected_on_demand_bytes;
  std::uint64_t expected_cache_ram_bytes = 0;
  // The projector's part of expected_load_bytes (weights + compute buffer; 0: none or older).
  std::uint64_t expected_projector_bytes = 0;
  std::string backend;  // "cpu" or "cuda": how a measurement of the process is read
  // The plan was an estimate (launch --force --overhead on an architecture without layer
  // rules): its figures are not to be judged against the process.
  bool plan_estimate = false;
  nlohmann::json plan;  // the full plan document, as `launch --dry-run --json` prints it
  // What other commands use of `plan`, as read_recorded_plan reads it (record_from_json fills
  // it; whoever sets `plan` in memory sets this from it too).
  RecordedPlan planned;
  // Tuning rules (server::check_rules ids) the command failed: asked for by launch's own
  // settings and started with a warning (verify shows ⚠), or passed with --force (verify keeps
  // ✘). Empty in a record of an older gb10tune.
  std::vector<std::string> rules_chosen;
  std::vector<std::string> rules_forced;
  // A tuned profile's measurements the launch judged the rules with (verify judges them the
  // same way): empty without a tuned profile, and in a record of an older gb10tune.
  std::vector<server::MeasuredSetting> rules_measured;
};

// The record as a JSON document (schema_version 1).
nlohmann::json record_to_json(const LaunchRecord& record);
// Parses a record (the one reader of launch.json: `planned` is read from its plan document); an
// Error naming `source` (a path) when a field is missing or mistyped.
Expected<LaunchRecord> record_from_json(const nlohmann::json& doc, const std::string& source);
// Reads the record file (trust::read_private_file: the caller's, writable by no one else); an
// Error with ExitCode::failed when absent, unreadable, or refused, naming the file and the fix.
Expected<LaunchRecord> read_launch_record(const std::filesystem::path& path);
// Writes the record atomically (0600).
Status write_launch_record(const std::filesystem::path& path, const LaunchRecord& record);

}  // namespace gb10tune::launch
