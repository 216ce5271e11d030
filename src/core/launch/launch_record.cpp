#include "gb10tune/launch/launch_record.hpp"

#include <fmt/format.h>

#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/json_field.hpp"

namespace gb10tune::launch {

namespace {

constexpr int kSchemaVersion = 1;

nlohmann::json measured_to_json(const std::vector<server::MeasuredSetting>& measured) {
  nlohmann::json out = nlohmann::json::array();
  for (const server::MeasuredSetting& m : measured) {
    out.push_back({{"rule", m.rule},
                   {"option", m.option},
                   {"value", m.value},
                   {"citation", m.citation},
                   {"not_applied", m.not_applied}});
  }
  return out;
}

bool measured_from_json(const nlohmann::json& doc, std::vector<server::MeasuredSetting>& out,
                        std::string& error) {
  if (!doc.is_array()) {
    error = "not an array";
    return false;
  }
  for (const nlohmann::json& entry : doc) {
    server::MeasuredSetting m;
    if (!get_field(entry, "rule", m.rule, error) || !get_field(entry, "option", m.option, error) ||
        !get_field(entry, "value", m.value, error) ||
        !get_field(entry, "citation", m.citation, error) ||
        !get_field(entry, "not_applied", m.not_applied, error)) {
      return false;
    }
    out.push_back(std::move(m));
  }
  return true;
}

}  // namespace

StatePaths StatePaths::under(const std::filesystem::path& state_dir) {
  return {state_dir / "launch.json", state_dir / "llama-server.pid", state_dir / "launch.lock",
          state_dir / "llama-server.log"};
}

nlohmann::json record_to_json(const LaunchRecord& r) {
  return {
      {"schema_version", kSchemaVersion},
      {"pid", r.pid},
      {"start_time_ticks", r.start_time_ticks},
      {"server_path", r.server_path},
      {"argv", r.argv},
      {"env_removed", r.env_removed},
      {"url", r.url},
      {"log_path", r.log_path},
      {"model_path", r.model_path},
      {"mmproj_path", r.mmproj_path},
      {"launched_at", r.launched_at},
      {"gb10tune_version", r.gb10tune_version},
      {"foreground", r.foreground},
      {"settings",
       {{"slots", r.slots},
        {"ctx_per_slot", r.ctx_per_slot},
        {"kv_unified", r.kv_unified},
        {"mtp", r.mtp},
        {"draft_n_max", r.draft_n_max},
        {"cache_ram_mib", r.cache_ram_mib}}},
      {"model",
       {{"architecture", r.architecture},
        {"has_mtp", r.model_has_mtp},
        {"layers", r.model_layers},
        {"bytes_per_token", r.bytes_per_token}}},
      {"expected",
       {{"weights_bytes", r.expected_weights_bytes},
        {"kv_bytes", r.expected_kv_bytes},
        {"total_bytes", r.expected_total_bytes},
        {"load_bytes", r.expected_load_bytes},
        {"on_demand_bytes", r.expected_on_demand_bytes ? nlohmann::json(*r.expected_on_demand_bytes)
                                                       : nlohmann::json(nullptr)},
        {"cache_ram_bytes", r.expected_cache_ram_bytes},
        {"projector_bytes", r.expected_projector_bytes},
        {"backend", r.backend},
        {"plan_estimate", r.plan_estimate}}},
      {"plan", r.plan},
      {"rules",
       {{"chosen", r.rules_chosen},
        {"forced", r.rules_forced},
        {"measured", measured_to_json(r.rules_measured)}}}};
}

Expected<LaunchRecord> record_from_json(const nlohmann::json& doc, const std::string& source) {
  const auto fail = [&](const std::string& why) {
    return Error{fmt::format("launch record {}: {}; it was written by another gb10tune version "
                             "or edited by hand: run `gb10tune launch` again to rewrite it",
                             source, why),
                 ExitCode::failed};
  };
  if (!doc.is_object()) {
    return fail("not a JSON object");
  }
  std::string error;
  int version = 0;
  if (!get_field(doc, "schema_version", version, error)) {
    return fail(error);
  }
  if (version != kSchemaVersion) {
    return fail(fmt::format("schema_version {} is not the supported {}", version, kSchemaVersion));
  }
  LaunchRecord r;
  nlohmann::json settings, model, expected;
  const bool ok =
      get_field(doc, "pid", r.pid, error) &&
      get_field(doc, "start_time_ticks", r.start_time_ticks, error) &&
      get_field(doc, "server_path", r.server_path, error) &&
      get_field(doc, "argv", r.argv, error) &&
      get_field(doc, "env_removed", r.env_removed, error) && get_field(doc, "url", r.url, error) &&
      get_field(doc, "log_path", r.log_path, error) &&
      get_field(doc, "model_path", r.model_path, error) &&
      get_field(doc, "mmproj_path", r.mmproj_path, error) &&
      get_field(doc, "launched_at", r.launched_at, error) &&
      get_field(doc, "gb10tune_version", r.gb10tune_version, error) &&
      get_field(doc, "settings", settings, error) && get_field(doc, "model", model, error) &&
      get_field(doc, "expected", expected, error) && get_field(doc, "plan", r.plan, error) &&
      get_field(settings, "slots", r.slots, error) &&
      get_field(settings, "ctx_per_slot", r.ctx_per_slot, error) &&
      get_field(settings, "kv_unified", r.kv_unified, error) &&
      get_field(settings, "mtp", r.mtp, error) &&
      get_field(settings, "draft_n_max", r.draft_n_max, error) &&
      get_field(settings, "cache_ram_mib", r.cache_ram_mib, error) &&
      get_field(model, "architecture", r.architecture, error) &&
      get_field(model, "has_mtp", r.model_has_mtp, error) &&
      get_field(model, "layers", r.model_layers, error) &&
      get_field(model, "bytes_per_token", r.bytes_per_token, error) &&
      get_field(expected, "weights_bytes", r.expected_weights_bytes, error) &&
      get_field(expected, "kv_bytes", r.expected_kv_bytes, error) &&
      get_field(expected, "total_bytes", r.expected_total_bytes, error);
  if (!ok) {
    return fail(error);
  }
  // Added later: optional, so that a record of an older gb10tune still reads.
  const auto bytes = [&](const char* key) {
    const auto it = expected.find(key);
    return it != expected.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
  };
  r.expected_load_bytes = bytes("load_bytes");
  r.expected_cache_ram_bytes = bytes("cache_ram_bytes");
  r.expected_projector_bytes = bytes("projector_bytes");
  if (const auto it = expected.find("on_demand_bytes");
      it != expected.end() && it->is_number_unsigned()) {
    r.expected_on_demand_bytes = it->get<std::uint64_t>();
  }
  if (const auto it = expected.find("backend"); it != expected.end() && it->is_string()) {
    r.backend = it->get<std::string>();
  }
  if (const auto it = expected.find("plan_estimate"); it != expected.end() && it->is_boolean()) {
    r.plan_estimate = it->get<bool>();
  }
  if (const auto it = doc.find("foreground"); it != doc.end() && it->is_boolean()) {
    r.foreground = it->get<bool>();
  }
  if (const auto rules = doc.find("rules"); rules != doc.end()) {
    if (!get_field(*rules, "chosen", r.rules_chosen, error) ||
        !get_field(*rules, "forced", r.rules_forced, error)) {
      return fail("rules: " + error);
    }
    // Added later: a record of an older gb10tune has none.
    if (const auto measured = rules->find("measured");
        measured != rules->end() && !measured_from_json(*measured, r.rules_measured, error)) {
      return fail("rules.measured: " + error);
    }
  }
  if (r.pid <= 0) {
    return fail(fmt::format("pid {} is not a process id", r.pid));
  }
  r.planned = read_recorded_plan(r.plan);
  return r;
}

Expected<LaunchRecord> read_launch_record(const std::filesystem::path& path) {
  const auto text = trust::read_private_file(path);
  if (!text) {
    return text.error();
  }
  if (!*text) {
    return Error{fmt::format("no launch record at {}: nothing was started with `gb10tune "
                             "launch` (or its state directory was removed)",
                             path.string()),
                 ExitCode::failed};
  }
  const auto doc = nlohmann::json::parse(**text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Error{fmt::format("launch record {} is not valid JSON; remove it and run `gb10tune "
                             "launch` again",
                             path.string()),
                 ExitCode::failed};
  }
  return record_from_json(doc, path.string());
}

Status write_launch_record(const std::filesystem::path& path, const LaunchRecord& record) {
  return platform::write_file_atomic(path, record_to_json(record).dump(2) + "\n");
}

}  // namespace gb10tune::launch
