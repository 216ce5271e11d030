#include "verify_command.hpp"

#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/render/verify_render.hpp"
#include "gb10tune/verify/system_services.hpp"
#include "gb10tune/verify/verify.hpp"
#include "state_save.hpp"

namespace gb10tune::cli {

namespace {

struct VerifyCliOptions {
  int pid = 0;
  bool json = false;
  bool strict = false;
  bool smoke = false;
  std::string url;
  std::string server_help;         // hidden: a --help text to use instead of running the binary
  std::string server_system_info;  // hidden: the binary's -lv 4 output, instead of running it
};

ExitCode run(const VerifyCliOptions& options, Context& ctx) {
  verify::VerifyOptions verify_options;
  if (options.pid > 0) {
    verify_options.pid = options.pid;
  }
  verify_options.smoke = options.smoke;
  verify_options.url = options.url;

  verify::SystemServicesInputs inputs;
  inputs.env = ctx.env;
  inputs.root = &ctx.sysroot;
  inputs.gpu = ctx.gpu;
  inputs.url = options.url;
  inputs.server_help_file = options.server_help;
  inputs.server_system_info_file = options.server_system_info;
  std::ostream* err = ctx.err;
  inputs.warn = [err](const std::string& text) { *err << "warning: " << text << "\n"; };
  const auto services = verify::system_services(inputs);
  if (!services) {
    return report_failure(ctx, services.error());
  }

  const verify::VerifyResult result = verify::run_verify(verify_options, *services);
  const nlohmann::json doc = render::verify_to_json(result, options.strict);
  save_to_state(ctx, "verify.json", "verify result", doc, false);  // for gb10tune report
  if (options.json) {
    *ctx.out << render::dump_document(doc);
  } else {
    *ctx.out << render::render_verify_text(result, options.strict, ctx.out_style());
  }
  return render::verify_exit_code(result, options.strict) == 0 ? ExitCode::ok : ExitCode::failed;
}

}  // namespace

Runner setup_verify(CLI::App& app) {
  auto options = std::make_shared<VerifyCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "verify",
      "Check that the running llama-server is on the fast path: its environment (no "
      "GGML_CUDA_ENABLE_UNIFIED_MEMORY), memory, flags from all four sources, HTTP answers and "
      "log.");
  sub->add_option("--pid", options->pid,
                  "Check this process (default: the one gb10tune launch started, else every "
                  "llama-server found in /proc)")
      ->check(CLI::PositiveNumber)
      ->option_text("PID");
  sub->add_flag("--json", options->json, "Print one JSON document instead of the checklist");
  sub->add_flag("--strict", options->strict, "Exit 1 on warnings too");
  sub->add_flag("--smoke", options->smoke,
                "Also run one short chat completion and report its timings");
  sub->add_option("--url", options->url,
                  "The server's base URL (default: the launch record's, else --host/--port)")
      ->option_text("URL");
  sub->add_option("--server-help", options->server_help,
                  "Read the server's options from this --help text instead of running it")
      ->group("");  // hidden: for captured machines and tests
  sub->add_option("--server-system-info", options->server_system_info,
                  "Read the build's system_info line from this file instead of running it")
      ->group("");  // hidden: for captured machines and tests
  sub->footer(exit_code_footer(
      {{ExitCode::ok, "nothing failed"},
       {ExitCode::failed,
        "a check failed or no llama-server is running (--strict: or a check warned)"},
       {ExitCode::usage}}));
  return [options](Context& ctx) { return run(*options, ctx); };
}

}  // namespace gb10tune::cli
