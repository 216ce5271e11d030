#include "launch_start.hpp"

#include <fmt/format.h>

#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::cli {

namespace {

launch::LaunchRecord make_record(const report::LaunchPreview& p,
                                 const launch::LaunchSettings& settings, const Context& ctx,
                                 const launch::StatePaths& paths, const std::string& url) {
  launch::LaunchRecord r;
  r.server_path = p.server_path;
  r.argv = p.command->argv;
  for (const auto& change : p.environment->changes) {
    if (change.action == launch::ChangeAction::removed) {
      r.env_removed.push_back(change.name);
    }
  }
  r.url = url;
  r.log_path = paths.log.string();
  r.model_path = p.model_files.front();
  r.mmproj_path = p.mmproj_path;
  r.launched_at = ctx.now_iso8601 ? ctx.now_iso8601() : "";
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
  r.plan = report::launch_to_json(p);
  (void)settings;
  return r;
}

}  // namespace

Expected<LaunchSession> LaunchSession::begin(Context& ctx) {
  const auto dir = platform::state_dir(ctx.env);
  if (!dir) {
    return dir.error();
  }
  auto paths = launch::StatePaths::under(*dir);
  auto lock = launch::LaunchLock::acquire(paths);
  if (!lock) {
    return lock.error();
  }
  const auto status = launch::check_pid_file(ctx.sysroot, paths);
  if (status.state == launch::PidFileState::running) {
    return Error{fmt::format("a llama-server started by gb10tune is already running (pid {}, "
                             "{}); it holds the memory this plan needs: stop it first with "
                             "`gb10tune stop`",
                             status.server->pid, status.server->record.url),
                 ExitCode::failed};
  }
  if (status.state == launch::PidFileState::stale) {
    *ctx.err << "gb10tune launch: removing a stale pid file: " << status.why << "\n";
    launch::clear_launch_state(paths);
  }
  return LaunchSession(ctx, std::move(paths), std::move(*lock));
}

ExitCode LaunchSession::start(const report::LaunchPreview& preview,
                              const launch::LaunchSettings& settings, bool json) {
  Context& ctx = *m_ctx;
  // Loudly: the variable the report found costs 16% of decode speed (K2).
  for (const auto& change : preview.environment->changes) {
    if (change.action == launch::ChangeAction::removed) {
      *ctx.err << fmt::format(
          "gb10tune launch: removed {}={} from the server's environment: {} "
          "({})\n",
          change.name, change.value, change.reason, change.fact);
    }
  }
  auto host = settings.text("host");
  if (host == "0.0.0.0" || host == "::" || host.empty()) {
    host = "127.0.0.1";  // listening everywhere: ask on the loopback address
  }
  const auto url_text =
      fmt::format("http://{}:{}", host.find(':') != std::string::npos ? "[" + host + "]" : host,
                  settings.integer("port"));
  const auto url = platform::parse_url(url_text);
  if (!url) {
    *ctx.err << "gb10tune launch: " << url.error().message << "\n";
    return ExitCode::usage;
  }
  launch::StartRequest request;
  request.argv = preview.command->argv;
  request.env = preview.environment->env;
  request.paths = m_paths;
  request.url = *url;
  request.timeout = std::chrono::seconds(settings.integer("timeout_s"));
  request.record = make_record(preview, settings, ctx, m_paths, url_text);

  platform::InterruptGuard guard;
  const auto progress = [&ctx](std::string_view line) {
    *ctx.err << "gb10tune launch: " << line << "\n";
    ctx.err->flush();
  };
  const auto started = launch::start_server(request, progress, guard.flag());
  if (!started) {
    *ctx.err << "gb10tune launch: " << started.error().message << "\n";
    return started.error().code;
  }
  const auto seconds = static_cast<double>(started->to_ready.count()) / 1000.0;
  if (json) {
    auto doc = report::launch_to_json(preview);
    doc["dry_run"] = false;
    doc["started"] = {{"pid", started->pid},
                      {"url", url_text},
                      {"log", m_paths.log.string()},
                      {"record", m_paths.record.string()},
                      {"ready_after_ms", started->to_ready.count()}};
    *ctx.out << report::dump_document(doc);
  } else {
    *ctx.out << fmt::format(
        "llama-server is ready at {} (pid {}, ready after {:.1f} s)\n"
        "  log:    {}\n"
        "  check:  gb10tune verify\n"
        "  stop:   gb10tune stop\n",
        url_text, started->pid, seconds, m_paths.log.string());
  }
  return ExitCode::ok;
}

}  // namespace gb10tune::cli
