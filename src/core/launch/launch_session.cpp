#include "gb10tune/launch/launch_session.hpp"

#include <fmt/format.h>

#include "gb10tune/plan/expected_memory.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/tune/tuned_profile.hpp"
#include "gb10tune/util/host_port.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::launch {

Expected<LaunchLease> begin_launch(const platform::Environment& env, const platform::Sysroot& root,
                                   const NoteSink& note) {
  const auto dir = trust::private_state_dir(env);
  if (!dir) {
    return dir.error();
  }
  auto paths = StatePaths::under(*dir);
  auto lock = LaunchLock::acquire(paths);
  if (!lock) {
    return lock.error();
  }
  const auto status = check_pid_file(root, paths);
  if (status.state == PidFileState::running) {
    return Error{fmt::format("a llama-server started by gb10tune is already running (pid {}, "
                             "{}); it holds the memory this plan needs: stop it first with "
                             "`gb10tune stop`",
                             status.server->pid, status.server->record.url),
                 ExitCode::failed};
  }
  if (status.state == PidFileState::stale) {
    note(NoteKind::info, "removing a stale pid file: " + status.why);
    clear_launch_state(paths);
  }
  return LaunchLease{std::move(paths), std::move(*lock)};
}

std::string launch_url(const LaunchSettings& settings) {
  return fmt::format("http://{}", format_host_port(reachable_host(settings.text("host")),
                                                   static_cast<int>(settings.integer("port"))));
}

LaunchRecord make_launch_record(const render::LaunchPreview& p, const StatePaths& paths,
                                const std::string& url, const std::string& launched_at) {
  LaunchRecord r;
  r.server_path = p.server_path;
  r.argv = p.command->argv;
  for (const auto& change : p.environment->changes) {
    if (change.action == ChangeAction::removed) {
      r.env_removed.push_back(change.name);
    }
  }
  r.url = url;
  r.log_path = paths.log.string();
  r.model_path = p.model_files.front();
  r.mmproj_path = p.mmproj_path;
  r.launched_at = launched_at;
  r.gb10tune_version = std::string(kToolVersion);
  r.slots = p.command->slots;
  r.ctx_per_slot = p.command->ctx_per_slot;
  r.kv_unified = p.command->kv_unified;
  r.mtp = p.command->mtp;
  r.draft_n_max = p.command->draft_n_max;
  r.cache_ram_mib = p.command->cache_ram_mib;
  r.architecture = p.model->architecture;
  r.model_has_mtp = p.model->has_mtp();
  r.model_layers = p.model->main_layer_count;
  r.bytes_per_token = p.model->bytes_read_per_token;
  r.expected_weights_bytes = p.plan->weights_bytes + p.plan->projector_bytes;
  r.expected_kv_bytes = p.plan->cache_bytes();
  r.expected_total_bytes = p.plan->total_bytes;
  const plan::ExpectedMemory expected = plan::expected_memory(*p.plan, p.config->backend);
  r.expected_load_bytes = expected.full();
  r.expected_on_demand_bytes = expected.on_demand;
  r.expected_cache_ram_bytes = p.plan->cache_ram_bytes;
  r.expected_projector_bytes = p.plan->projector_bytes + p.plan->projector_compute_bytes;
  r.backend = std::string(plan::backend_name(p.config->backend));
  r.plan_estimate = p.plan->estimate;
  if (p.rpc != nullptr && !p.rpc->nodes.nodes.empty()) {
    // The head holds only its own part: verify compares the process with that.
    const rpc::NodePart& head = p.rpc->nodes.nodes.back();
    r.expected_weights_bytes = head.weights_bytes;
    r.expected_kv_bytes = head.cache_bytes;
    r.expected_total_bytes = head.total_bytes;
    r.expected_load_bytes = head.load_bytes;
    r.expected_on_demand_bytes.reset();
  }
  r.plan = render::launch_to_json(p);
  r.planned = read_recorded_plan(r.plan);
  r.rules_chosen = p.rules->ids(RuleAction::chosen);
  r.rules_forced = p.rules->ids(RuleAction::forced);
  r.rules_measured = p.rules->measured;
  return r;
}

std::optional<std::string> tuned_profile_note(const platform::Environment& env,
                                              const std::string& model_path,
                                              const std::string& build) {
  if (!platform::config_dir(env)) {
    return std::nullopt;
  }
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(model_path, ec);
  const auto found = tune::find_tuned_profiles(tune::user_profile_dir(env),
                                               ec ? model_path : absolute.string(), build);
  if (found.empty()) {
    return std::nullopt;
  }
  const tune::FoundProfile& newest = found.front();
  return fmt::format(
      "a tuned profile exists for this model and build: {} ({:.2f}× {}, {}); start it with "
      "--profile {}",
      newest.name, newest.tuned.gain, newest.tuned.goal, newest.tuned.tuned_at.substr(0, 10),
      newest.name);
}

}  // namespace gb10tune::launch
