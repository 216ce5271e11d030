#include "launch_start.hpp"

#include <fmt/format.h>

#include <optional>

#include "failure.hpp"
#include "gb10tune/http/http_client.hpp"
#include "gb10tune/launch/server_exec.hpp"
#include "gb10tune/launch/start_measurement.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/util/line_printer.hpp"

namespace gb10tune::cli {

namespace {

// Loudly: the variable the report found costs 16% of decode speed (K2).
void say_removed_variables(Context& ctx, const launch::ChildEnvironment& environment) {
  for (const auto& change : environment.changes) {
    if (change.action == launch::ChangeAction::removed) {
      *ctx.err << fmt::format(
          "gb10tune launch: removed {}={} from the server's environment: {} ({})\n", change.name,
          change.value, change.reason, change.fact);
    }
  }
}

// Starts the server, its load on stderr: on a terminal one line redrawn as the load goes on;
// elsewhere a line per stage, so that a log of a long load is a few lines, not one per second.
Expected<launch::StartResult> start_with_progress(Context& ctx,
                                                  const launch::StartRequest& request) {
  platform::InterruptGuard guard;
  LinePrinter printer(*ctx.err, ctx.err_redraws(), ctx.err_columns);
  std::optional<launch::LoadStage> printed_stage;
  const auto progress = [&](const launch::StartProgress& now) {
    if (!printer.smart() && printed_stage == now.load.stage) {
      return;
    }
    printed_stage = now.load.stage;
    printer.status(fmt::format("gb10tune launch: {}… {} s (timeout {} s)", now.load.describe(),
                               now.elapsed.count() / 1000, now.timeout.count() / 1000));
  };
  auto started = launch::start_server(request, progress, guard.flag());
  printer.finish();
  return started;
}

// Never a silent switch: a tuned profile for this model and build is named, not used.
void say_tuned_profile(Context& ctx, const render::LaunchPreview& preview, const std::string& url) {
  if (preview.profile_reason == "--profile" || !ctx.connect_server || preview.model_files.empty()) {
    return;
  }
  const auto endpoint = ctx.connect_server(url, std::chrono::seconds(5));
  const auto info = endpoint ? endpoint->info() : Expected<bench::ServerInfo>(endpoint.error());
  if (!info) {
    return;
  }
  if (const auto note =
          launch::tuned_profile_note(ctx.env, preview.model_files.front(), info->build_info)) {
    *ctx.err << "gb10tune launch: " << *note << "\n";
  }
}

// What a start of the previewed command under `lease` asks of the core; a usage Error for a
// host and port that make no URL.
Expected<launch::StartRequest> start_request(Context& ctx, const launch::LaunchLease& lease,
                                             const render::LaunchPreview& preview,
                                             const launch::LaunchSettings& settings) {
  const std::string url_text = launch::launch_url(settings);
  const auto url = http::parse_url(url_text);
  if (!url) {
    return Error{url.error().message, ExitCode::usage};
  }
  const std::string now = ctx.now_iso8601 ? ctx.now_iso8601() : "";
  launch::StartRequest request;
  request.argv = preview.command->argv;
  request.env = preview.environment->env;
  request.paths = lease.paths;
  request.url = *url;
  request.timeout = std::chrono::seconds(settings.integer("timeout_s"));
  request.record = launch::make_launch_record(preview, lease.paths, url_text, now);
  return request;
}

}  // namespace

ExitCode start_foreground(Context& ctx, const launch::LaunchLease& lease,
                          const render::LaunchPreview& preview,
                          const launch::LaunchSettings& settings,
                          const std::filesystem::path& log) {
  say_removed_variables(ctx, *preview.environment);
  const auto request = start_request(ctx, lease, preview, settings);
  if (!request) {
    return report_failure(ctx, request.error());
  }
  *ctx.err << fmt::format(
      "gb10tune launch: llama-server runs in the foreground as pid {} at {}, its output {}; "
      "nothing waits for /health here (the supervisor's health check does) and the start is not "
      "measured: check it with `gb10tune verify` once it answers\n",
      platform::current_pid(), request->record.url,
      log.empty() ? std::string("on this process's stdout and stderr") : "in " + log.string());
  ctx.out->flush();
  ctx.err->flush();
  return report_failure(ctx, launch::exec_server(*request, log));
}

ExitCode start_launch(Context& ctx, const launch::LaunchLease& lease,
                      const render::LaunchPreview& preview, const launch::LaunchSettings& settings,
                      bool json) {
  say_removed_variables(ctx, *preview.environment);
  const auto request = start_request(ctx, lease, preview, settings);
  if (!request) {
    return report_failure(ctx, request.error());
  }
  const std::string url_text = request->record.url;
  const auto started = start_with_progress(ctx, *request);
  if (!started) {
    return report_failure(ctx, started.error());
  }
  const auto measured =
      launch::measure_started_server(preview, started->pid, ctx.gpu, ctx.env, lease.paths.log,
                                     ctx.now_iso8601 ? ctx.now_iso8601() : "");
  say_tuned_profile(ctx, preview, url_text);
  if (json) {
    auto doc = render::launch_to_json(preview);
    doc["dry_run"] = false;
    doc["started"] = {{"pid", started->pid},
                      {"url", url_text},
                      {"log", lease.paths.log.string()},
                      {"record", lease.paths.record.string()},
                      {"ready_after_ms", started->to_ready.count()}};
    doc["calibration"] = measured.doc;
    *ctx.out << render::dump_document(doc);
  } else {
    const auto seconds = static_cast<double>(started->to_ready.count()) / 1000.0;
    *ctx.out << fmt::format(
        "llama-server is ready at {} (pid {}, ready after {:.1f} s)\n"
        "  {}\n"
        "  log:    {}\n"
        "  check:  gb10tune verify\n"
        "  stop:   gb10tune stop\n",
        url_text, started->pid, seconds, measured.line, lease.paths.log.string());
  }
  return ExitCode::ok;
}

}  // namespace gb10tune::cli
