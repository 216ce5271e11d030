#include "rpc_command.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/render/rpc_render.hpp"
#include "gb10tune/rpc/rpc_client.hpp"
#include "gb10tune/rpc/rpc_worker.hpp"
#include "gb10tune/rpc/worker_start.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/version.hpp"
#include "number_option.hpp"
#include "renamed_option.hpp"

namespace gb10tune::cli {

namespace {

using std::chrono::milliseconds;

constexpr milliseconds kQueryTimeout{2000};

struct RpcOptions {
  std::string action;  // "start", "stop", "status"
  std::string host = "127.0.0.1";
  int port = 50052;
  std::string server_bin;
  bool cache = false;
  int threads = 0;
  std::string devices;
  bool expose = false;
  double timeout_s = 60;  // start: the wait for the hello
  double grace_s = 60;    // stop: SIGTERM to SIGKILL
  bool json = false;
  std::vector<RenamedOption> renamed;
};

Expected<launch::StatePaths> paths_for(const Context& ctx, int port) {
  const auto dir = trust::private_state_dir(ctx.env);
  if (!dir) {
    return dir.error();
  }
  return rpc::worker_state_paths(*dir, port);
}

// Says why it failed (stderr, and with --json a document on stdout); returns the exit code.
ExitCode fail(Context& ctx, const Error& error) {
  return report_failure(ctx, error);
}

ExitCode run_start(const RpcOptions& options, Context& ctx) {
  rpc::WorkerStartRequest request;
  request.worker.bind = {options.host, options.port};
  request.worker.cache = options.cache;
  request.worker.threads = options.threads;
  request.worker.devices = options.devices;
  request.worker.expose = options.expose;
  request.server_bin = options.server_bin;
  request.timeout = milliseconds(static_cast<long>(options.timeout_s * 1000));
  std::ostream* err = ctx.err;
  const auto note = [err](const std::string& text) {
    *err << "gb10tune rpc start: " << text << "\n";
  };
  platform::InterruptGuard guard;
  const auto started = rpc::start_worker(request, ctx.env, ctx.sysroot, note, guard.flag());
  if (!started) {
    return fail(ctx, started.error());
  }
  const std::string bind = request.worker.bind.to_string();
  if (options.json) {
    *ctx.out << render::dump_document(render::rpc_start_to_json(*started, bind));
  } else {
    *ctx.out << render::render_rpc_start_text(*started, bind, options.port);
  }
  return ExitCode::ok;
}

ExitCode run_stop(const RpcOptions& options, Context& ctx) {
  auto paths = paths_for(ctx, options.port);
  if (!paths) {
    return fail(ctx, paths.error());
  }
  const auto status = launch::check_pid_file(ctx.sysroot, *paths);
  if (status.state != launch::PidFileState::running) {
    if (status.state == launch::PidFileState::stale) {
      launch::clear_launch_state(*paths);
      *ctx.err << "gb10tune rpc stop: removed a stale pid file: " << status.why << "\n";
    }
    *ctx.out << (options.json
                     ? render::dump_document(render::rpc_stop_to_json(options.port, nullptr))
                     : render::render_rpc_stop_text(options.port, nullptr));
    return ExitCode::ok;
  }
  const auto stopped = launch::stop_server(
      ctx.sysroot, *paths, milliseconds(static_cast<long>(options.grace_s * 1000)), "rpc stop");
  if (!stopped) {
    return fail(ctx, stopped.error());
  }
  *ctx.out << (options.json
                   ? render::dump_document(render::rpc_stop_to_json(options.port, &*stopped))
                   : render::render_rpc_stop_text(options.port, &*stopped));
  return ExitCode::ok;
}

ExitCode run_status(const RpcOptions& options, Context& ctx) {
  auto paths = paths_for(ctx, options.port);
  if (!paths) {
    return fail(ctx, paths.error());
  }
  const auto status = launch::check_pid_file(ctx.sysroot, *paths);
  rpc::Endpoint bind{options.host, options.port};
  if (status.state == launch::PidFileState::running) {
    if (auto recorded = rpc::parse_endpoint(status.server->record.url.substr(6))) {
      bind = *recorded;  // "rpc://" + host:port
    }
  }
  // A worker whose log shows a connected client serves a head: it is not asked anything (it
  // serves one client at a time, and a message queued behind the head's session is read
  // once the head leaves).
  bool busy = false;
  if (status.state == launch::PidFileState::running) {
    std::ifstream in(paths->log, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    busy = rpc::worker_log_shows_client(text);
  }
  render::RpcStatusView view;
  view.endpoint = bind.to_string();
  view.started_by_gb10tune = status.state == launch::PidFileState::running;
  if (view.started_by_gb10tune) {
    view.pid = status.server->pid;
    view.log = paths->log.string();
  }
  if (busy) {
    view.busy = fmt::format(
        "serving a client (its log {} shows a connection still open, i.e. a head's llama-server "
        "uses it); not asked for its memory: rpc-server serves one client at a time",
        paths->log.string());
  } else if (auto info = rpc::query_worker(rpc::query_endpoint(bind), kQueryTimeout)) {
    view.info = std::move(*info);
  } else {
    view.error = info.error().message;
  }
  *ctx.out << (options.json ? render::dump_document(render::rpc_status_to_json(view))
                            : render::render_rpc_status_text(view));
  return view.busy.empty() && !view.info ? ExitCode::failed : ExitCode::ok;
}

// The options every rpc subcommand takes.
void add_common_options(CLI::App* sub, const std::shared_ptr<RpcOptions>& options) {
  sub->add_option("--port", options->port, "The worker's port (default 50052)")
      ->check(integer_range(1, 65535))
      ->option_text("PORT");
  sub->add_flag("--json", options->json, "Print one JSON document");
}

// `rpc start`'s options.
void add_start(CLI::App* rpc, const std::shared_ptr<RpcOptions>& options) {
  CLI::App* start = rpc->add_subcommand(
      "start",
      "Start rpc-server bound to --host/--port with a clean environment (no "
      "GGML_CUDA_ENABLE_UNIFIED_MEMORY, K2), wait until it answers the RPC hello, report its "
      "devices' memory.");
  start->add_option("--host", options->host,
                    "Address to bind (default 127.0.0.1; use the direct link's address)");
  add_common_options(start, options);
  start
      ->add_option("--rpc-server", options->server_bin,
                   "The rpc-server binary (default: ggml-rpc-server or rpc-server on PATH)")
      ->option_text("PATH");
  keep_renamed(start->add_option("--server-bin", options->server_bin), "--rpc-server",
               options->renamed);
  start->add_flag("--cache", options->cache,
                  "Pass -c: the worker keeps received tensors in a local cache, so a restart of "
                  "the head loads them from disk instead of over the link");
  // -c is the context size (launch, llama-server); here it was the cache.
  keep_renamed(start->add_flag("-c", options->cache), "--cache", options->renamed);
  start->add_option("--threads", options->threads, "Pass -t N (CPU device threads)")
      ->check(integer_range(0, 4096))
      ->option_text("N");
  start
      ->add_option("--device", options->devices,
                   "Pass -d LIST: llama.cpp's device names to serve (e.g. CUDA0,CUDA1; "
                   "`rpc-server --help` lists them)")
      ->option_text("LIST");
  start->add_flag("--expose", options->expose,
                  "Allow binding 0.0.0.0 or ::; the RPC protocol has no authentication");
  start
      ->add_option("--timeout", options->timeout_s,
                   "Seconds to wait for the worker's hello (default 60)")
      ->check(finite_range(1.0, 3600.0))
      ->option_text("SECONDS");
  start->footer(exit_code_footer(
      {{ExitCode::ok, "ready"},
       {ExitCode::failed, "a worker started by gb10tune already runs on the port"},
       {ExitCode::usage,
        "usage error (an any-address bind without --expose, an address rpc-server cannot bind, no "
        "rpc-server, a number out of range)"},
       {ExitCode::server_failed, "the worker failed to start or to answer its hello"},
       {ExitCode::interrupted, "interrupted (SIGINT), the worker stopped"},
       {ExitCode::terminated, "terminated (SIGTERM), the worker stopped"}}));
  start->callback([options] { options->action = "start"; });
}

// `rpc stop`'s and `rpc status`'s options.
void add_stop_and_status(CLI::App* rpc, const std::shared_ptr<RpcOptions>& options) {
  CLI::App* stop = rpc->add_subcommand("stop", "Stop the worker that `rpc start` started.");
  add_common_options(stop, options);
  stop->add_option("--grace", options->grace_s,
                   "Seconds to wait after SIGTERM before SIGKILL (default 60)")
      ->check(finite_range(0.0, 3600.0))
      ->option_text("SECONDS");
  keep_renamed(stop->add_option("--timeout", options->grace_s)
                   ->check(finite_range(0.0, 3600.0, "--timeout")),
               "--grace", options->renamed);
  stop->footer(exit_code_footer({{ExitCode::ok, "stopped, or nothing to stop"},
                                 {ExitCode::failed, "the worker could not be stopped"},
                                 {ExitCode::usage}}));
  stop->callback([options] { options->action = "stop"; });
  CLI::App* status = rpc->add_subcommand(
      "status",
      "Ask a worker for its protocol version and devices' memory (the recorded one, or "
      "--host/--port).");
  status->add_option("--host", options->host, "The worker's address (default 127.0.0.1)");
  add_common_options(status, options);
  status->footer(exit_code_footer(
      {{ExitCode::ok, "it answers"}, {ExitCode::failed, "it does not answer"}, {ExitCode::usage}}));
  status->callback([options] { options->action = "status"; });
}

}  // namespace

Runner setup_rpc(CLI::App& app) {
  auto options = std::make_shared<RpcOptions>();
  CLI::App* rpc = app.add_subcommand(
      "rpc", "The llama.cpp RPC worker (rpc-server) of a two-machine setup: start, stop, status.");
  rpc->require_subcommand(1);
  add_start(rpc, options);
  add_stop_and_status(rpc, options);
  return [options](Context& ctx) {
    note_renamed(options->renamed, ctx);
    if (options->action == "start") {
      return run_start(*options, ctx);
    }
    if (options->action == "stop") {
      return run_stop(*options, ctx);
    }
    return run_status(*options, ctx);
  };
}

}  // namespace gb10tune::cli
