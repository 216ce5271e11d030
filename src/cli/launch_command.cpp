#include "launch_command.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/bench/server_bench_setup.hpp"
#include "gb10tune/launch/launch_planner.hpp"
#include "gb10tune/launch/launch_session.hpp"
#include "gb10tune/launch/replan_command.hpp"
#include "gb10tune/launch/what_fits.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/render/plan_ahead_render.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "launch_start.hpp"
#include "setting_options.hpp"

namespace gb10tune::cli {

namespace {

// What the command line asks: the planner's request, and what to do with the plan.
struct LaunchOptions {
  bool dry_run = false;
  bool json = false;
  bool explain = false;
  bool foreground = false;  // --foreground: become the server instead of starting it
  std::string log;          // --log: the server's output with --foreground
  std::string print;        // --print: an export instead of a start
  std::string form;         // --form: replan or frozen ("" = the export's default)
  launch::LaunchRequest request;
};

// The planner's view of this run; its notes go to stderr.
launch::PlannerContext planner_context(Context& ctx) {
  return {ctx.env, ctx.sysroot, ctx.gpu, [&ctx](launch::NoteKind kind, const std::string& text) {
            *ctx.err << (kind == launch::NoteKind::warning ? "warning: " : "gb10tune launch: ")
                     << text << "\n";
          }};
}

// Never silent: what launch goes on past, and what the fit lowered, is said on stderr when no
// preview shows it.
void say_on_stderr(Context& ctx, const launch::LaunchPlan& plan) {
  if (!plan.draft.built.command.context_capped.empty()) {
    *ctx.err << "gb10tune launch: " << plan.draft.built.command.context_capped << "\n";
  }
  if (plan.fit && !plan.fit->given_up.empty()) {
    for (const auto& line : render::describe_fit_changes(*plan.fit)) {
      *ctx.err << "gb10tune launch: to fit in memory, lowered " << line << "\n";
    }
  }
  const launch::BuiltCommand& built = plan.draft.built;
  for (const auto& line : render::launch_warnings(built.command, built.environment, built.rules)) {
    *ctx.err << "gb10tune launch: warning: " << line << "\n";
  }
  for (const auto& line : render::launch_measured(built.rules)) {
    *ctx.err << "gb10tune launch: measured by a tune (outranks the rule): ✔ " << line << "\n";
  }
}

// The re-planning command of an export: this gb10tune (its /proc/self/exe) launched in the
// foreground with what `asked` asked.
Expected<std::vector<std::string>> replan_command(const launch::LaunchRequest& asked,
                                                  const launch::LaunchPlan& plan) {
  const auto self = sys::read_process_exe(platform::Sysroot(), platform::current_pid());
  if (!self || self->deleted) {
    return Error{
        "the re-planning form of --print needs this gb10tune's own path, and "
        "/proc/self/exe does not give it (no /proc, or the binary was replaced); use "
        "--form frozen for the planned command itself",
        ExitCode::failed};
  }
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  return launch::replan_argv(self->path, asked, ec ? std::filesystem::path("/") : cwd,
                             plan.draft.server_path);
}

// --print: the same command as a start would run (after the fit), for another supervisor; or,
// re-planning, the command that plans and fits again at each start.
ExitCode print_export(Context& ctx, const LaunchOptions& in, const launch::LaunchRequest& asked,
                      const launch::LaunchPlan& plan) {
  if (auto fits = launch::check_export(plan); !fits) {
    return report_failure(ctx, fits.error());
  }
  say_on_stderr(ctx, plan);
  launch::ExportInputs inputs = launch::export_inputs(plan);
  if (in.form.empty() ? launch::replans_by_default(in.print) : in.form == "replan") {
    auto argv = replan_command(asked, plan);
    if (!argv) {
      return report_failure(ctx, argv.error());
    }
    inputs.replan = std::move(*argv);
  }
  const auto text = launch::render_launch_export(in.print, inputs);
  if (!text) {
    return report_failure(ctx, text.error());
  }
  *ctx.out << *text;
  return ExitCode::ok;
}

// The dry run, or a refused start: the preview (text or JSON); a refusal is said on stderr, and
// in the document with the plan it refused.
ExitCode show_plan(Context& ctx, const LaunchOptions& in, const launch::LaunchPlan& plan,
                   const render::LaunchPreview& preview,
                   const std::optional<std::string>& refusal) {
  // The decode ceiling by depth, when a saved probe says this machine's bandwidth.
  const launch::DecodeCeiling ceiling =
      launch::plan_ceiling(plan.draft.model, plan.config, plan.draft.built.command.ctx_per_slot,
                           bench::saved_probe_bandwidth(ctx.env));
  if (in.json) {
    auto doc = render::launch_to_json(preview);
    doc["dry_run"] = in.dry_run;
    doc["decode_ceiling"] = render::decode_ceiling_json(ceiling);
    if (refusal) {
      render::add_failure(doc, to_int(ExitCode::memory_refused), *refusal);
    }
    *ctx.out << render::dump_document(doc);
  } else {
    *ctx.out << render::render_launch_text(preview, ctx.out_style(), in.explain);
    if (ceiling.available) {
      *ctx.out << '\n' << render::render_decode_ceiling(ceiling);
    }
  }
  if (refusal) {
    *ctx.err << "gb10tune launch: " << *refusal << "\n";
    return ExitCode::memory_refused;
  }
  return ExitCode::ok;
}

ExitCode run(LaunchOptions in, Context& ctx) {
  const launch::PlannerContext context = planner_context(ctx);
  const launch::LaunchRequest asked = in.request;  // as given, for a re-planning export
  auto draft = launch::draft_launch(std::move(in.request), context);
  if (!draft) {
    return report_failure(ctx, draft.error());
  }
  // Two launches must not both find the memory free: the lock is held from the memory check
  // until the server is ready.
  std::optional<launch::LaunchLease> lease;
  if (!in.dry_run && in.print.empty()) {  // a start, detached or in the foreground
    auto begun = launch::begin_launch(ctx.env, ctx.sysroot, context.note);
    if (!begun) {
      return report_failure(ctx, begun.error());
    }
    lease.emplace(std::move(*begun));
  }
  // The workers are not contacted for an export.
  const auto plan = launch::plan_launch(std::move(*draft), context, in.print.empty());
  if (!plan) {
    return report_failure(ctx, plan.error());
  }
  if (!in.print.empty()) {
    return print_export(ctx, in, asked, *plan);
  }
  const render::LaunchPreview preview = launch::preview_of(*plan);
  const auto refusal = launch::start_refusal(*plan);
  if (in.dry_run || refusal) {
    return show_plan(ctx, in, *plan, preview, refusal);
  }
  if (in.explain && !in.json) {
    *ctx.out << render::render_launch_text(preview, ctx.out_style(), true);
  } else {
    say_on_stderr(ctx, *plan);
  }
  if (in.foreground) {
    std::error_code ec;
    const auto log =
        in.log.empty() ? std::filesystem::path() : std::filesystem::absolute(in.log, ec);
    return start_foreground(ctx, *lease, preview, plan->draft.settings, log);
  }
  return start_launch(ctx, *lease, preview, plan->draft.settings, in.json);
}

// Adds the options of every launch setting: an option taking its value and the switches that
// set it to one value; names, help (with the default and the range) and value text all come
// from the setting's spec, so that --help cannot drift from what launch does. The value goes to
// the request and is checked against the spec with the rest of the command line, exactly as a
// profile's value is.
}  // namespace

Runner setup_launch(CLI::App& app) {
  auto o = std::make_shared<LaunchOptions>();
  CLI::App* sub = app.add_subcommand(
      "launch",
      "Start llama-server for a model, the way the tuning report found best: read the model's "
      "GGUF header and this llama-server's --help, plan memory exactly against MemAvailable, "
      "clean the environment (no GGML_CUDA_ENABLE_UNIFIED_MEMORY), start it and wait until it "
      "is ready.");
  sub->add_flag("--dry-run", o->dry_run,
                "Print the plan, the environment and the command; "
                "start nothing");
  sub->add_flag("--json", o->json, "Print one JSON document instead of text");
  sub->add_flag("--explain", o->explain,
                "Also show where every setting came from and why every option is there");
  sub->add_flag("--force", o->request.force,
                "Go on past refusals (memory, missing options, K6), each shown as a warning; "
                "with --overhead SIZE, start an architecture gb10tune has no layer rules for, "
                "planned as an estimate (weights + SIZE)");
  sub->add_option("--backend", o->request.backend,
                  "Plan the buffers of this backend: auto (from the llama-server build and the "
                  "machine), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->option_text("auto|cpu|cuda");
  sub->add_option("--rpc", o->request.rpc,
                  "Spread the model over llama.cpp RPC workers (rpc-server): each is asked for "
                  "its protocol version and memory, and the plan is checked per machine")
      ->option_text("HOST:PORT[,HOST:PORT…]");
  CLI::Option* print =
      sub->add_option("--print", o->print,
                      "Print a systemd unit, llama-swap's model entry or a router preset section "
                      "for the same command; "
                      "start nothing")
          ->check(CLI::IsMember({"systemd", "llama-swap", "preset"}))
          ->option_text("systemd|llama-swap|preset");
  sub->add_option("--form", o->form,
                  "With --print systemd|llama-swap: replan (the default) runs `gb10tune launch "
                  "--foreground` with this command line, planning and fitting again at each "
                  "start; frozen runs the command planned now. A preset is always frozen")
      ->check(CLI::IsMember({"replan", "frozen"}))
      ->option_text("replan|frozen")
      ->needs(print);
  CLI::Option* foreground = sub->add_flag(
      "--foreground", o->foreground,
      "Plan, fit and check as launch does, write the state record, then become llama-server "
      "(the same pid) for a supervisor such as systemd or llama-swap: no detaching, no wait for "
      "/health, no start measurement; its output stays on stdout and stderr");
  foreground->excludes("--dry-run")->excludes(print)->excludes("--json");
  sub->add_option("--log", o->log,
                  "With --foreground: append the server's output to FILE instead of stdout and "
                  "stderr")
      ->option_text("FILE")
      ->needs(foreground);
  sub->add_option("--profile", o->request.profile,
                  "gb10-dense-mtp, gb10-moe, single-slot, or a JSON file (default: by model)")
      ->option_text("NAME|FILE");
  add_setting_options(*sub, o->request);
  sub->add_option_function<std::int64_t>(
         "--ctx-size,-c", [o](std::int64_t value) { o->request.ctx_size = value; },
         "Context tokens of all slots together (sets --ctx-per-slot = this / slots; 0 = the "
         "model's native context per slot)")
      ->option_text("N");
  sub->add_option("args", o->request.extra, "After --: further llama-server arguments");
  sub->footer(
      "Settings: built-in < profile < $XDG_CONFIG_HOME/gb10tune/config.json < command line; "
      "--explain shows each value's source.\n" +
      exit_code_footer(
          {{ExitCode::ok, "started (or planned)"},
           {ExitCode::failed,
            "a server that launch started still runs, or another launch holds the lock"},
           {ExitCode::usage,
            "usage error or refused (also an RPC worker of another protocol version)"},
           {ExitCode::memory_refused, "memory refused (also on one RPC node)"},
           {ExitCode::server_failed,
            "the server failed to start or become ready (also an RPC worker that does not "
            "answer)"},
           {ExitCode::not_started,
            "nothing was started: the server's port is taken (checked by binding it first)"},
           {ExitCode::interrupted, "interrupted (SIGINT), the server stopped"},
           {ExitCode::terminated, "terminated (SIGTERM), the server stopped"}}));
  return [o](Context& ctx) { return run(*o, ctx); };
}

}  // namespace gb10tune::cli
