#include "gb10tune/bench/server_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "gb10tune/util/json_field.hpp"
#include "gb10tune/version.hpp"
namespace gb10tune::bench {

namespace {

constexpr std::string_view kCommand = "bench server";

nlohmann::json summary_json(const MetricSummary& summary) {
  const SampleStats& s = summary.stats;
  return {{"count", s.count},
          {"median", s.median},
          {"min", s.min},
          {"max", s.max},
          {"mean", s.mean},
          {"stddev", s.stddev},
          {"cv", s.cv},
          {"mad", summary.mad},
          {"median_interval",
           {{"low", summary.interval.low},
            {"high", summary.interval.high},
            {"confidence", summary.interval.confidence}}}};
}

nlohmann::json timings_json(const ServerTimings& t) {
  nlohmann::json out = {{"prompt_n", t.prompt_n},
                        {"prompt_ms", t.prompt_ms},
                        {"prompt_per_second", t.prompt_per_second},
                        {"predicted_n", t.predicted_n},
                        {"predicted_ms", t.predicted_ms},
                        {"predicted_per_second", t.predicted_per_second}};
  for (auto [name, value] : {std::pair{"cache_n", &t.cache_n}, std::pair{"draft_n", &t.draft_n},
                             std::pair{"draft_n_accepted", &t.draft_n_accepted}}) {
    if (*value) {
      out[name] = **value;
    }
  }
  return out;
}

nlohmann::json level_json(const LevelResult& level) {
  const LevelSummary summary = summarize_level(level);
  nlohmann::json metrics = nlohmann::json::object();
  for (const MetricSummary& metric : summary.metrics) {
    metrics[std::string(metric_info(metric.metric).id)] = summary_json(metric);
  }
  nlohmann::json samples = nlohmann::json::array();
  for (const RequestSample& sample : level.samples) {
    samples.push_back({{"request", sample.request},
                       {"session", sample.session},
                       {"round", sample.round},
                       {"client_seconds", sample.client_seconds},
                       {"timings", timings_json(sample.timings)}});
  }
  return {{"concurrency", level.concurrency},
          {"metrics", metrics},
          {"per_session_decode_tps", summary_json(summary.per_session_decode)},
          {"total_decode_tps", summary_json(summary.total_decode)},
          {"round_totals_tps", level.round_totals},
          {"client_wall_seconds", level.wall_seconds},
          {"generated_tokens", level.generated_tokens},
          {"client_tokens_per_second", summary.client_tokens_per_second},
          {"samples", samples}};
}

// Reads field `name` of `doc` into `target`; false (with `error` set) when absent or mistyped.

bool read_timings(const nlohmann::json& doc, ServerTimings& t, std::string& error) {
  if (!(get_field(doc, "prompt_n", t.prompt_n, error) &&
        get_field(doc, "prompt_ms", t.prompt_ms, error) &&
        get_field(doc, "prompt_per_second", t.prompt_per_second, error) &&
        get_field(doc, "predicted_n", t.predicted_n, error) &&
        get_field(doc, "predicted_ms", t.predicted_ms, error) &&
        get_field(doc, "predicted_per_second", t.predicted_per_second, error))) {
    return false;
  }
  for (auto [name, target] : {std::pair{"cache_n", &t.cache_n}, std::pair{"draft_n", &t.draft_n},
                              std::pair{"draft_n_accepted", &t.draft_n_accepted}}) {
    if (doc.contains(name)) {
      double value = 0;
      if (!get_field(doc, name, value, error)) {
        return false;
      }
      *target = value;
    }
  }
  return true;
}

bool read_level(const nlohmann::json& doc, LevelResult& level, std::string& error) {
  nlohmann::json samples;
  if (!(get_field(doc, "concurrency", level.concurrency, error) &&
        get_field(doc, "round_totals_tps", level.round_totals, error) &&
        get_field(doc, "client_wall_seconds", level.wall_seconds, error) &&
        get_field(doc, "generated_tokens", level.generated_tokens, error) &&
        get_field(doc, "samples", samples, error))) {
    return false;
  }
  if (!samples.is_array()) {
    error = "field 'samples' is not an array";
    return false;
  }
  for (const auto& entry : samples) {
    RequestSample sample;
    nlohmann::json timings;
    if (!(get_field(entry, "request", sample.request, error) &&
          get_field(entry, "session", sample.session, error) &&
          get_field(entry, "round", sample.round, error) &&
          get_field(entry, "client_seconds", sample.client_seconds, error) &&
          get_field(entry, "timings", timings, error) &&
          read_timings(timings, sample.timings, error))) {
      error = fmt::format("sample {}: {}", level.samples.size() + 1, error);
      return false;
    }
    level.samples.push_back(std::move(sample));
  }
  return true;
}

bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

LevelSummary summarize_level(const LevelResult& level) {
  LevelSummary summary;
  summary.concurrency = level.concurrency;
  for (Metric metric : kMetrics) {
    summary.metrics.push_back(summarize_samples(metric, level.samples));
  }
  summary.per_session_decode = metric_of(summary, Metric::decode_tps);
  summary.total_decode = summarize_metric(Metric::decode_tps, level.round_totals);
  summary.client_tokens_per_second =
      level.wall_seconds > 0 ? static_cast<double>(level.generated_tokens) / level.wall_seconds : 0;
  return summary;
}

const MetricSummary& metric_of(const LevelSummary& summary, Metric metric) {
  for (const MetricSummary& entry : summary.metrics) {
    if (entry.metric == metric) {
      return entry;
    }
  }
  throw std::logic_error("metric_of: a LevelSummary without every metric");
}

nlohmann::json trimmed_props(const nlohmann::json& props) {
  nlohmann::json out = props;
  if (out.is_object()) {
    out.erase("chat_template");
    out.erase("chat_template_tool_use");
  }
  return out;
}

nlohmann::json result_to_json(const ServerBenchResult& r) {
  const Provenance& p = r.provenance;
  nlohmann::json doc = {{"schema_version", kSchemaVersion},
                        {"tool", kToolName},
                        {"version", kToolVersion},
                        {"command", kCommand}};
  doc["date"] = p.date;
  doc["gb10tune_version"] = p.tool_version;
  doc["url"] = p.url;
  doc["server"] = {{"model_path", p.model_path},
                   {"build_info", p.build_info},
                   {"total_slots", p.total_slots},
                   {"n_ctx_per_slot", p.n_ctx_per_slot},
                   {"speculative", p.speculative ? nlohmann::json(*p.speculative) : nullptr},
                   {"spec_type", p.spec_type},
                   {"spec_draft_n_max", p.draft_n_max ? nlohmann::json(*p.draft_n_max) : nullptr},
                   {"spec_source", p.spec_source},
                   {"rpc_workers", p.rpc_workers},
                   {"rpc_source", p.rpc_source},
                   {"launch_argv", p.launch_argv},
                   {"props", p.props}};
  doc["settings"] = p.settings;
  doc["workload"] = {{"source", r.workload_source},
                     {"requests", r.workload_requests},
                     {"conversations", r.workload_conversations},
                     {"samples", r.options.samples},
                     {"warmup", r.options.warmup},
                     {"concurrency", r.options.concurrency}};
  nlohmann::json levels = nlohmann::json::array();
  for (const LevelResult& level : r.levels) {
    levels.push_back(level_json(level));
  }
  doc["levels"] = levels;
  const Roofline& roof = r.roofline;
  doc["roofline"] = {{"available", roof.available},
                     {"missing", roof.missing},
                     {"bytes_per_token", roof.inputs.bytes_per_token},
                     {"bytes_source", roof.inputs.bytes_source},
                     {"bandwidth_bytes_per_second", roof.inputs.bandwidth_bytes_per_second},
                     {"bandwidth_source", roof.inputs.bandwidth_source},
                     {"step_seconds", roof.step_seconds},
                     {"mean_accepted_length", roof.mean_accepted_length},
                     {"ceiling_tps", roof.ceiling_tps},
                     {"measured_tps", roof.measured_tps},
                     {"percent_of_ceiling", roof.percent_of_ceiling}};
  const DepthRoofline& d = roof.at_depth;
  doc["roofline"]["at_depth"] = d.available
                                    ? nlohmann::json{{"depth", d.depth},
                                                     {"cache_bytes", d.cache_bytes},
                                                     {"ceiling_tps", d.ceiling_tps},
                                                     {"percent_of_ceiling", d.percent_of_ceiling},
                                                     {"expect_kind", d.expect_kind},
                                                     {"expect_tps_low", d.expect_low_tps},
                                                     {"expect_tps_high", d.expect_high_tps}}
                                    : nlohmann::json(nullptr);
  return doc;
}

Expected<ServerBenchResult> result_from_json(const nlohmann::json& doc, const std::string& source) {
  const auto fail = [&](const std::string& why) {
    return Error{fmt::format("{} is not a saved `gb10tune bench server` result: {}; save one "
                             "with `gb10tune bench server --save NAME`",
                             source, why),
                 ExitCode::usage};
  };
  if (!doc.is_object()) {
    return fail("not a JSON object");
  }
  std::string command;
  int version = 0;
  std::string error;
  if (!get_field(doc, "command", command, error) || command != kCommand) {
    return fail(error.empty() ? fmt::format("its command is '{}'", command) : error);
  }
  if (!get_field(doc, "schema_version", version, error)) {
    return fail(error);
  }
  if (version != kSchemaVersion) {
    return fail(fmt::format("schema_version {} is not the supported {}", version, kSchemaVersion));
  }
  ServerBenchResult r;
  Provenance& p = r.provenance;
  nlohmann::json server, workload, levels, roof;
  const bool ok =
      get_field(doc, "date", p.date, error) &&
      get_field(doc, "gb10tune_version", p.tool_version, error) &&
      get_field(doc, "url", p.url, error) && get_field(doc, "server", server, error) &&
      get_field(server, "model_path", p.model_path, error) &&
      get_field(server, "build_info", p.build_info, error) &&
      get_field(server, "total_slots", p.total_slots, error) &&
      get_field(server, "n_ctx_per_slot", p.n_ctx_per_slot, error) &&
      get_field(server, "launch_argv", p.launch_argv, error) &&
      get_field(server, "props", p.props, error) && get_field(doc, "settings", p.settings, error) &&
      get_field(doc, "workload", workload, error) &&
      get_field(workload, "source", r.workload_source, error) &&
      get_field(workload, "requests", r.workload_requests, error) &&
      get_field(workload, "conversations", r.workload_conversations, error) &&
      get_field(workload, "samples", r.options.samples, error) &&
      get_field(workload, "warmup", r.options.warmup, error) &&
      get_field(workload, "concurrency", r.options.concurrency, error) &&
      get_field(doc, "levels", levels, error) && get_field(doc, "roofline", roof, error) &&
      get_field(roof, "available", r.roofline.available, error) &&
      get_field(roof, "missing", r.roofline.missing, error) &&
      get_field(roof, "bytes_per_token", r.roofline.inputs.bytes_per_token, error) &&
      get_field(roof, "bytes_source", r.roofline.inputs.bytes_source, error) &&
      get_field(roof, "bandwidth_bytes_per_second", r.roofline.inputs.bandwidth_bytes_per_second,
                error) &&
      get_field(roof, "bandwidth_source", r.roofline.inputs.bandwidth_source, error) &&
      get_field(roof, "step_seconds", r.roofline.step_seconds, error) &&
      get_field(roof, "mean_accepted_length", r.roofline.mean_accepted_length, error) &&
      get_field(roof, "ceiling_tps", r.roofline.ceiling_tps, error) &&
      get_field(roof, "measured_tps", r.roofline.measured_tps, error) &&
      get_field(roof, "percent_of_ceiling", r.roofline.percent_of_ceiling, error);
  if (!ok) {
    return fail(error);
  }
  if (const auto spec = server.find("speculative"); spec != server.end() && spec->is_boolean()) {
    p.speculative = spec->get<bool>();
  }
  // Results saved before these fields existed lack them: unknown, not an error.
  if (const auto d = roof.find("at_depth"); d != roof.end() && d->is_object()) {
    DepthRoofline& at = r.roofline.at_depth;
    at.available = true;
    at.depth = d->value("depth", std::uint64_t{0});
    at.cache_bytes = d->value("cache_bytes", std::uint64_t{0});
    at.ceiling_tps = d->value("ceiling_tps", 0.0);
    at.percent_of_ceiling = d->value("percent_of_ceiling", 0.0);
    at.expect_kind = d->value("expect_kind", "");
    at.expect_low_tps = d->value("expect_tps_low", 0.0);
    at.expect_high_tps = d->value("expect_tps_high", 0.0);
  }
  if (const auto type = server.find("spec_type"); type != server.end() && type->is_string()) {
    p.spec_type = type->get<std::string>();
  }
  if (const auto n_max = server.find("spec_draft_n_max");
      n_max != server.end() && n_max->is_number_unsigned() && n_max->get<std::uint64_t>() <= 1024) {
    p.draft_n_max = n_max->get<std::uint32_t>();
  }
  if (const auto spec_source = server.find("spec_source");
      spec_source != server.end() && spec_source->is_string()) {
    p.spec_source = spec_source->get<std::string>();
  }
  if (const auto workers = server.find("rpc_workers");
      workers != server.end() && workers->is_string()) {
    p.rpc_workers = workers->get<std::string>();
  }
  if (const auto rpc_source = server.find("rpc_source");
      rpc_source != server.end() && rpc_source->is_string()) {
    p.rpc_source = rpc_source->get<std::string>();
  }
  if (!levels.is_array() || levels.empty()) {
    return fail("field 'levels' is not a non-empty array");
  }
  for (const auto& entry : levels) {
    LevelResult level;
    if (!read_level(entry, level, error)) {
      return fail(fmt::format("level {}: {}", r.levels.size() + 1, error));
    }
    r.levels.push_back(std::move(level));
  }
  return r;
}

Status check_result_name(std::string_view name) {
  const bool valid = !name.empty() && name.size() <= 128 && name.front() != '.' &&
                     std::all_of(name.begin(), name.end(), valid_name_char);
  if (!valid) {
    return Error{fmt::format("'{}' is not a result name; use letters, digits, '.', '_' and '-' "
                             "(not starting with '.'), such as mtp-n4",
                             name),
                 ExitCode::usage};
  }
  return {};
}

Expected<std::filesystem::path> saved_result_path(std::string_view name,
                                                  const std::filesystem::path& state_dir) {
  if (const Status valid = check_result_name(name); !valid) {
    return valid.error();
  }
  if (state_dir.empty()) {
    return Error{fmt::format("cannot find saved result '{}': no state directory (set HOME or "
                             "XDG_STATE_HOME), or give the result's path",
                             name),
                 ExitCode::usage};
  }
  return state_dir / "bench" / (std::string(name) + ".json");
}

Expected<std::filesystem::path> resolve_result(std::string_view name_or_path,
                                               const std::filesystem::path& state_dir) {
  const bool is_path =
      name_or_path.find('/') != std::string_view::npos ||
      (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  if (is_path) {
    return std::filesystem::path(name_or_path);
  }
  return saved_result_path(name_or_path, state_dir);
}

}  // namespace gb10tune::bench
