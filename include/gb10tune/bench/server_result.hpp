// A finished server benchmark with its provenance, as saved under the state directory and
// read back by `bench compare`. The raw per-request timings are the record; every statistic
// is derived from them (and recomputed on load).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/bench/roofline.hpp"
#include "gb10tune/bench/run_settings.hpp"
#include "gb10tune/bench/server_metrics.hpp"
#include "gb10tune/bench/server_run.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::bench {

// Where the figures come from.
struct Provenance {
  std::string date;  // ISO 8601, UTC
  std::string tool_version;
  std::string url;
  std::string model_path;  // from /props
  std::string build_info;  // from /props
  std::uint32_t total_slots = 0;
  std::uint64_t n_ctx_per_slot = 0;
  std::optional<bool> speculative;           // what the server runs (resolve_speculative)
  std::string spec_type;                     // "draft-mtp", "none", …; "" when no source says
  std::optional<std::uint32_t> draft_n_max;  // only when drafting
  std::string spec_source;                   // which source said what
  // The RPC workers the server uses ("host:port,…"), "" when none; `rpc_source` says where
  // that was read, "" when no source knew (a server started elsewhere by hand: unknown).
  std::string rpc_workers;
  std::string rpc_source;
  nlohmann::json props;                  // the /props answer (chat templates left out)
  std::vector<std::string> launch_argv;  // the launch record's argv; empty when unknown
  RunSettings settings;                  // settings_from_props + settings_from_argv
};

struct ServerBenchResult {
  Provenance provenance;
  std::string workload_source;
  std::size_t workload_requests = 0;
  std::size_t workload_conversations = 0;
  ServerRunOptions options;
  std::vector<LevelResult> levels;  // the first is the headline
  Roofline roofline;
};

// The statistics of one level.
struct LevelSummary {
  int concurrency = 1;
  std::vector<MetricSummary> metrics;   // one per kMetrics entry, in that order
  MetricSummary per_session_decode;     // the requests' own decode rates (= the decode metric)
  MetricSummary total_decode;           // the round totals (sum of the sessions' rates)
  double client_tokens_per_second = 0;  // client-timed: generated tokens / wall seconds
};

// Derives the statistics of `level`.
LevelSummary summarize_level(const LevelResult& level);

// The summary of `metric` in `summary` (always present; count 0 when no request had it).
const MetricSummary& metric_of(const LevelSummary& summary, Metric metric);

// The /props answer without its long, unhelpful fields (chat templates).
nlohmann::json trimmed_props(const nlohmann::json& props);

// The result as a JSON document (command "bench server"): provenance, settings, workload,
// each level with its statistics and every request's timings, and the roofline.
nlohmann::json result_to_json(const ServerBenchResult& result);

// Reads a document written by result_to_json; an Error naming `source` and the field that is
// missing or mistyped (ExitCode::usage: the user named the file).
Expected<ServerBenchResult> result_from_json(const nlohmann::json& doc, const std::string& source);

// Checks a result name: an Error (ExitCode::usage) for a name that is empty, starts with '.',
// or holds anything but letters, digits, '.', '_', '-'.
Status check_result_name(std::string_view name);

// Where `--save NAME` writes: <state_dir>/bench/NAME.json. An Error (ExitCode::usage) for a
// bad name (check_result_name) or an empty `state_dir` (none could be found).
Expected<std::filesystem::path> saved_result_path(std::string_view name,
                                                  const std::filesystem::path& state_dir);

// What `bench compare` reads for `name_or_path`: a path when it contains '/' or ends in
// ".json", else the saved result NAME (as saved_result_path).
Expected<std::filesystem::path> resolve_result(std::string_view name_or_path,
                                               const std::filesystem::path& state_dir);

}  // namespace gb10tune::bench
