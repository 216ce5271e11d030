#include "stop_command.hpp"

#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/launch/stop_servers.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/render/stop_render.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "number_option.hpp"
#include "renamed_option.hpp"

namespace gb10tune::cli {

namespace {

using std::chrono::milliseconds;

struct StopOptions {
  bool all = false;
  bool json = false;
  double grace_s = 30;
  std::vector<RenamedOption> renamed;
};

using launch::StopOutcome;

ExitCode run(const StopOptions& options, Context& ctx) {
  note_renamed(options.renamed, ctx);
  const auto dir = trust::private_state_dir(ctx.env);
  if (!dir) {
    return report_failure(ctx, dir.error());  // no HOME (usage), or a state dir not believed
  }
  const launch::StatePaths paths = launch::StatePaths::under(*dir);
  const StopOutcome outcome = launch::stop_found(
      ctx.sysroot, paths,
      launch::find_servers_to_stop(ctx.sysroot, paths, {options.all, platform::current_uid()}),
      milliseconds{static_cast<long>(options.grace_s * 1000.0)});
  if (options.json) {
    *ctx.out << render::dump_document(render::stop_to_json(outcome));
  } else {
    *ctx.out << render::render_stop_text(outcome);
  }
  return outcome.failed() ? ExitCode::failed : ExitCode::ok;
}

}  // namespace

Runner setup_stop(CLI::App& app) {
  auto options = std::make_shared<StopOptions>();
  CLI::App* sub = app.add_subcommand(
      "stop",
      "Stop the llama-server that gb10tune launch started (checked by pid, start time and "
      "executable, so that a reused pid is never signalled): SIGTERM, then SIGKILL after the "
      "timeout.");
  sub->add_flag("--all", options->all,
                "Stop every llama-server process of this user, listed first, including ones "
                "gb10tune did not start");
  sub->add_option("--grace", options->grace_s,
                  "Seconds to wait after SIGTERM before SIGKILL (default 30)")
      ->check(finite_range(0.0, 3600.0))
      ->option_text("SECONDS");
  keep_renamed(
      sub->add_option("--timeout", options->grace_s)->check(finite_range(0.0, 3600.0, "--timeout")),
      "--grace", options->renamed);
  sub->add_flag("--json", options->json, "Print one JSON document");
  sub->footer(exit_code_footer({{ExitCode::ok, "stopped, or nothing to stop"},
                                {ExitCode::failed, "a process could not be stopped"},
                                {ExitCode::usage}}));
  return [options](Context& ctx) { return run(*options, ctx); };
}

}  // namespace gb10tune::cli
