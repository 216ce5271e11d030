#include "gb10tune/bench/server_bench_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "gb10tune/launch/what_fits.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/decode_reads.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/text_file.hpp"
#include "gb10tune/verify/verify.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::bench {

std::optional<launch::LaunchRecord> find_launch_record(const platform::Environment& env,
                                                       const WarnFn& warn) {
  const auto dir = trust::private_state_dir(env);
  if (!dir) {
    if (dir.error().code != ExitCode::usage && warn) {
      warn("launch record not read: " + dir.error().message);
    }
    return std::nullopt;
  }
  auto record = launch::read_launch_record(launch::StatePaths::under(*dir).record);
  if (!record) {
    return std::nullopt;
  }
  return std::move(*record);
}

std::optional<std::vector<std::string>> local_server_argv(const platform::Sysroot& root,
                                                          const std::string& url) {
  std::optional<std::vector<std::string>> found;
  int matches = 0;
  for (const sys::ServerCandidate& process : sys::find_running_servers(root)) {
    if (process.argv.empty()) {
      continue;
    }
    const auto env = sys::read_process_environ(root, process.stat.pid);
    if (verify::url_from_process(process.argv, env ? &*env : nullptr) == url) {
      found = process.argv;
      ++matches;
    }
  }
  return matches == 1 ? found : std::nullopt;
}

namespace {

// The cache type a llama-server argv gives with `short_name`/`long_name`; f16, its default,
// when it gives none or one this tool does not know.
gguf::GgmlType argv_cache_type(const std::vector<std::string>& argv, std::string_view short_name,
                               std::string_view long_name) {
  gguf::GgmlType type = gguf::GgmlType::f16;
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == short_name || argv[i] == long_name) {
      type = plan::parse_cache_type(argv[i + 1]).value_or(gguf::GgmlType::f16);
    }
  }
  return type;
}

// The cache part of the roofline: the layers of `facts` with the cache types of `argv`, and
// what published runs of such a model reached.
void add_cache_reads(RooflineInputs& inputs, model::ModelFacts facts,
                     const std::vector<std::string>& argv) {
  if (!facts.supported) {
    return;
  }
  const launch::DecodeExpectation expect = launch::decode_expectation(facts);
  inputs.expect_kind = expect.kind;
  inputs.expect_low = expect.low;
  inputs.expect_high = expect.high;
  const gguf::GgmlType k = argv_cache_type(argv, "-ctk", "--cache-type-k");
  const gguf::GgmlType v = argv_cache_type(argv, "-ctv", "--cache-type-v");
  inputs.cache_bytes_at = [model = std::make_shared<const model::ModelFacts>(std::move(facts)), k,
                           v](std::uint64_t depth) -> std::optional<std::uint64_t> {
    const auto bytes = plan::cache_bytes_read_at_depth(*model, depth, k, v);
    return bytes ? std::optional<std::uint64_t>(*bytes) : std::nullopt;
  };
}

}  // namespace

std::optional<double> saved_probe_bandwidth(const platform::Environment& env) {
  const auto dir = trust::private_state_dir(env);
  if (!dir) {
    return std::nullopt;
  }
  const auto text = read_text_file(*dir / "probe.json");
  if (!text) {
    return std::nullopt;
  }
  return device_read_bandwidth(nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false));
}

Expected<RooflineInputs> roofline_inputs(const RooflineSources& sources,
                                         const std::optional<launch::LaunchRecord>& record,
                                         const ServerInfo& info) {
  RooflineInputs inputs;
  // The served model's header is read once: its bytes per token (unless the launch record has
  // them) and its layers for the caches' part.
  const std::string served = !sources.model_file.empty() ? sources.model_file
                             : !info.model_path.empty()  ? info.model_path
                             : record                    ? record->model_path
                                                         : std::string();
  auto facts = served.empty() ? Expected<model::ModelFacts>(Error{"no model file"})
                              : model::read_model(served);
  if (!sources.model_file.empty()) {
    if (!facts) {
      return Error{fmt::format("--model {}: {}", sources.model_file, facts.error().message),
                   ExitCode::usage};
    }
    inputs.bytes_per_token = facts->bytes_read_per_token;
    inputs.bytes_source = "--model";
  } else if (record && record->bytes_per_token > 0 &&
             (info.model_path.empty() || record->model_path == info.model_path)) {
    inputs.bytes_per_token = record->bytes_per_token;
    inputs.bytes_source = "launch record";
  } else if (!info.model_path.empty() && facts) {
    inputs.bytes_per_token = facts->bytes_read_per_token;
    inputs.bytes_source = "the server's model file";
  }
  if (inputs.bytes_per_token > 0 && facts) {
    add_cache_reads(inputs, std::move(*facts), record ? record->argv : std::vector<std::string>());
  }
  if (sources.bandwidth_gbps > 0) {
    inputs.bandwidth_bytes_per_second = sources.bandwidth_gbps * 1e9;
    inputs.bandwidth_source = "--bandwidth";
  } else if (const auto bandwidth = saved_probe_bandwidth(sources.env)) {
    inputs.bandwidth_bytes_per_second = *bandwidth;
    inputs.bandwidth_source = "saved probe, cudaMalloc read";
  }
  return inputs;
}

Roofline roofline_of(const RooflineInputs& inputs, const LevelResult& headline) {
  const LevelSummary head = summarize_level(headline);
  const MetricSummary& mean_len = metric_of(head, Metric::mean_accepted_length);
  Roofline roof = compute_roofline(
      inputs, metric_of(head, Metric::decode_tps).stats.median,
      mean_len.stats.count > 0 ? std::optional<double>(mean_len.stats.median) : std::nullopt);
  // Where the requests decoded: the whole prompt (its cached part too) and half the answer.
  std::vector<double> depths;
  for (const RequestSample& sample : headline.samples) {
    const ServerTimings& t = sample.timings;
    depths.push_back(t.prompt_n + t.cache_n.value_or(0) + t.predicted_n / 2);
  }
  if (!depths.empty()) {
    std::nth_element(depths.begin(), depths.begin() + depths.size() / 2, depths.end());
    add_depth(roof, static_cast<std::uint64_t>(depths[depths.size() / 2]));
  }
  return roof;
}

Provenance describe_server(const ServerInfo& info, const std::string& url,
                           const std::optional<launch::LaunchRecord>& record,
                           const platform::Sysroot& root, const std::string& date) {
  Provenance p;
  p.date = date;
  p.tool_version = std::string(kToolVersion);
  p.url = url;
  p.model_path = info.model_path;
  p.build_info = info.build_info;
  p.total_slots = info.total_slots;
  p.n_ctx_per_slot = info.n_ctx_per_slot;
  p.props = trimmed_props(info.props);
  p.settings = settings_from_props(info.props);
  const bool launched = record && record->url == url;
  if (launched) {
    p.launch_argv = record->argv;
    for (auto& [key, value] : settings_from_argv(record->argv)) {
      p.settings[key] = value;
    }
  }
  // /slots says what the server runs; /props only shows per-request defaults. The launch
  // record (or, for a server started by hand, its command line) says which type and depth.
  std::optional<std::vector<std::string>> argv;
  std::string argv_source = "launch record";
  if (launched) {
    argv = record->argv;
  } else if ((argv = local_server_argv(root, url))) {
    argv_source = "the server's command line";
  }
  const SpeculativeSetting spec = resolve_speculative(info.slots_reported, info.slots_speculative,
                                                      argv ? &*argv : nullptr, argv_source);
  p.speculative = spec.on;
  p.spec_type = spec.type;
  p.draft_n_max = spec.n_max;
  p.spec_source = spec.source;
  for (auto& [key, value] : settings_from_speculative(spec)) {
    p.settings[key] = value;
  }
  // The topology (llama.cpp RPC workers): a setting like any other for compare.
  if (argv) {
    p.rpc_workers = rpc_workers_from_argv(*argv);
    p.rpc_source = argv_source;
    for (auto& [key, value] : settings_from_rpc(p.rpc_workers)) {
      p.settings[key] = value;
    }
  }
  return p;
}

Status check_save_target(const std::string& name, const platform::Environment& env, bool force) {
  if (force) {
    return {};
  }
  const auto dir = platform::state_dir(env);
  if (!dir) {
    return {};  // save_result reports the state directory's problem
  }
  const auto path = saved_result_path(name, *dir);
  std::error_code ec;
  if (path && std::filesystem::exists(*path, ec)) {
    return Error{fmt::format("--save {}: {} already holds a saved result; choose another name, "
                             "or pass --force to replace it",
                             name, path->string()),
                 ExitCode::usage};
  }
  return {};
}

Expected<std::filesystem::path> save_result(const nlohmann::json& doc, const std::string& name,
                                            const platform::Environment& env) {
  const auto dir = trust::private_state_dir(env);
  if (!dir) {
    return Error{fmt::format("--save {}: {}", name, dir.error().message), ExitCode::failed};
  }
  const auto path = saved_result_path(name, *dir);
  if (!path) {
    return path.error();
  }
  for (const std::filesystem::path& folder : {*dir, path->parent_path()}) {
    if (const Status made = trust::ensure_private_dir(folder); !made) {
      return made.error();
    }
  }
  if (const Status written = platform::write_file_atomic(*path, render::dump_document(doc));
      !written) {
    return written.error();
  }
  return *path;
}

}  // namespace gb10tune::bench
