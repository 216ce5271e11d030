#include "tune_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/render/tune_render.hpp"
#include "gb10tune/tune/tune_progress.hpp"
#include "gb10tune/tune/tune_session.hpp"
#include "gb10tune/util/line_printer.hpp"
#include "number_option.hpp"

namespace gb10tune::cli {

namespace {

struct TuneOptionsIn {
  tune::TuneRequest request;
  std::string goal = "decode";
  std::string strategy = "coordinate";
  std::string budget = "20m";
  std::string profile_name;
  bool no_save = false;
  bool json = false;
};

tune::TuneEnvironment tune_environment(Context& ctx) {
  return {ctx.env,
          ctx.sysroot,
          ctx.gpu,
          ctx.connect_server,
          ctx.clock_seconds,
          ctx.now_iso8601,
          [&ctx](launch::NoteKind kind, const std::string& text) {
            *ctx.err << (kind == launch::NoteKind::warning ? "warning: " : "gb10tune tune: ")
                     << text << "\n";
          }};
}

// The progress on stderr: one line redrawn on a terminal, a line per candidate elsewhere.
std::function<void(const tune::TuneEvent&)> progress_printer(Context& ctx, LinePrinter& printer,
                                                             const std::string& label,
                                                             double budget_s) {
  return [&ctx, &printer, label, budget_s](const tune::TuneEvent& event) {
    if (event.kind == tune::TuneEventKind::candidate_done && event.result) {
      printer.finish();
      *ctx.err << "tune: " << tune::candidate_line(*event.result) << "\n";
    } else if (event.kind == tune::TuneEventKind::costs_known) {
      printer.finish();
      *ctx.err << tune::costs_line(event, budget_s) << "\n";
    }
    // Elsewhere than on a terminal a candidate is its outcome's line: no line as it begins.
    const bool step = event.kind == tune::TuneEventKind::measuring_start ||
                      event.kind == tune::TuneEventKind::remeasure ||
                      event.kind == tune::TuneEventKind::restoring;
    if (printer.smart() || step) {
      printer.status(tune::progress_line(event, label));
    }
  };
}

// Saves the winner (a tune that ended done or on the budget) and says how to start it.
Status save_winner(Context& ctx, const TuneOptionsIn& in, const tune::TuneSession& session,
                   const tune::TuneResult& result, nlohmann::json& doc) {
  const tune::TunedFor tuned = session.tuned_for(result);
  const std::string name =
      in.profile_name.empty() ? tune::tuned_profile_name(tuned) : in.profile_name;
  const auto path = tune::save_tuned_profile(
      ctx.env, name, tune::tuned_profile_document(session.winner_settings(result.winner), tuned));
  if (!path) {
    return path.error();
  }
  doc["profile"] = {{"name", name}, {"path", path->string()}};
  *ctx.err << fmt::format(
      "tune: the winner is saved as profile {} ({}); the original server runs again.\n"
      "start the winner with: gb10tune stop && gb10tune launch --profile {}\n",
      name, path->string(), name);
  return {};
}

ExitCode run(TuneOptionsIn in, Context& ctx) {
  const auto budget = tune::parse_duration_s(in.budget);
  if (!budget) {
    return report_failure(ctx, Error{fmt::format("--budget {}: give a duration such as 20m, "
                                                 "90s, 1h or 1h30m",
                                                 in.budget),
                                     ExitCode::usage});
  }
  in.request.budget_s = *budget;
  in.request.strategy = tune::parse_strategy(in.strategy).value_or(tune::Strategy::coordinate);
  in.request.goal = in.goal == "throughput" ? tune::Goal::throughput
                    : in.goal == "prefill"  ? tune::Goal::prefill
                                            : tune::Goal::decode;
  if (!in.profile_name.empty()) {
    if (const Status valid = tune::check_profile_name(in.profile_name); !valid) {
      return report_failure(ctx, valid.error());
    }
  }
  auto session = tune::TuneSession::open(in.request, tune_environment(ctx));
  if (!session) {
    return report_failure(ctx, session.error());
  }
  for (const std::string& note : (*session)->notes()) {
    *ctx.err << "gb10tune tune: " << note << "\n";
  }
  platform::InterruptGuard interrupt;
  LinePrinter printer(*ctx.err, ctx.err_redraws(), ctx.err_columns);
  tune::TuneOptions& options = (*session)->options();
  options.progress = progress_printer(
      ctx, printer, tune::metric_label(options.goal, options.concurrency), options.budget_s);
  const tune::TuneRun run = tune::run_tune(options, (*session)->seam(), interrupt.flag());
  printer.finish();
  nlohmann::json doc = render::make_document("tune");
  doc.update(render::tune_to_json(run.result));
  doc["depth"] = (*session)->depth();
  if (!run.journal_warning.empty()) {
    *ctx.err << "warning: the journal could not be written: " << run.journal_warning << "\n";
  }
  Status saved;
  const bool finished = !run.error && (run.result.stopped == tune::StopReason::done ||
                                       run.result.stopped == tune::StopReason::budget);
  // The final comparison alone decides: nothing is saved unless the winner beat the original
  // measured next to it in time.
  const bool worth = !run.error && tune::worth_saving(run.result);
  doc["saved"] = worth && !in.no_save;
  if (worth && !in.no_save) {
    saved = save_winner(ctx, in, **session, run.result, doc);
  } else if (worth) {
    *ctx.err << "tune: the winner beat the original beyond the noise; not saved (--no-save)\n";
  } else if (finished && run.measured_start) {
    *ctx.err << "tune: " << tune::nothing_saved_line(run.result) << "\n";
  }
  ExitCode code = after_interrupt(tune::tune_exit_code(run));
  const Error* failure = run.error ? &*run.error : (!saved ? &saved.error() : nullptr);
  if (failure != nullptr && code == ExitCode::ok) {
    code = failure->code;
  }
  if (in.json) {
    if (failure != nullptr) {
      render::add_failure(doc, to_int(code), failure->message);
    }
    *ctx.out << render::dump_document(doc);
  } else if (run.measured_start) {
    *ctx.out << render::render_tune(run.result,
                                    ctx.err_columns > 0 ? static_cast<int>(ctx.err_columns) : 80);
  }
  if (failure != nullptr) {
    *ctx.err << "gb10tune tune: " << failure->message << "\n";
  } else if (!finished && run.result.stopped != tune::StopReason::budget) {
    *ctx.err << fmt::format(
        "gb10tune tune: ended early ({}); the original server runs again. "
        "Continue with: gb10tune tune --resume\n",
        tune::to_string(run.result.stopped));
  }
  return code;
}

}  // namespace

Runner setup_tune(CLI::App& app) {
  auto o = std::make_shared<TuneOptionsIn>();
  CLI::App* sub = app.add_subcommand(
      "tune",
      "Find the fastest settings of the server `gb10tune launch` started by measuring them: one "
      "change at a time, each candidate planned against memory before it starts, compared "
      "paired with the best so far on the same requests, within a time budget; the winner is "
      "saved as a profile for launch --profile, and the original server runs again.");
  sub->add_option("--goal", o->goal,
                  "decode (one session's decode t/s), throughput (total decode t/s of "
                  "--concurrency sessions) or prefill (time to first token)")
      ->check(CLI::IsMember({"decode", "throughput", "prefill"}))
      ->option_text("decode|throughput|prefill");
  sub->add_option("--concurrency", o->request.concurrency,
                  "Parallel sessions for --goal throughput (default 1)")
      ->check(integer_range(1, 256))
      ->option_text("N");
  sub->add_option("--budget", o->budget,
                  "How long the whole tune may take: 20m (default), 90s, 1h30m; one candidate "
                  "more at most")
      ->option_text("DURATION");
  sub->add_option("--prompts", o->request.prompts,
                  "Your own workload: JSON lines, as bench server (default: the shipped one)")
      ->option_text("FILE");
  sub->add_option("--max-context", o->request.max_context,
                  "Leave out the requests needing more than N tokens (as bench server)")
      ->check(CLI::PositiveNumber)
      ->option_text("N");
  sub->add_option("--depth", o->request.depth,
                  "Measure decode with every request's prompt about N tokens deep (a fixed "
                  "filler before it, sized with the server's tokenizer); default: the workload's "
                  "deepest prompt, at most what the slot leaves room for; 0: the prompts as "
                  "written; the prefill goal ignores it")
      ->check(integer_range(std::int64_t{0}, std::int64_t{1} << 40))
      ->option_text("N");
  sub->add_option("--samples", o->request.samples,
                  "Measured requests per candidate (default: the workload's, at most 12)")
      ->check(integer_range(3, 100000))
      ->option_text("N");
  sub->add_option("--strategy", o->strategy,
                  "coordinate (default: one knob at a time, the report's method) or grid (every "
                  "combination of the knobs' values: the reference a coordinate search is "
                  "checked against, far slower)")
      ->check(CLI::IsMember({"coordinate", "grid"}))
      ->option_text("coordinate|grid");
  std::vector<std::string> knob_names;
  for (const tune::Knob& knob : tune::knob_table()) {
    knob_names.emplace_back(knob.setting);
  }
  sub->add_option("--knobs", o->request.knobs,
                  fmt::format("Search only these knobs, comma-separated ({}); default: every "
                              "knob that applies",
                              fmt::join(knob_names, ", ")))
      ->delimiter(',')
      ->option_text("LIST");
  sub->add_flag("--allow-lossy", o->request.allow_lossy,
                "Also try knobs that change the output (a q8_0 KV cache)");
  sub->add_flag("--resume", o->request.resume,
                "Continue the last tune from its journal, measuring nothing again");
  sub->add_option("--profile-name", o->profile_name,
                  "Save the winner under this name (default: tuned-<model>-<goal>)")
      ->option_text("NAME");
  sub->add_flag("--no-save", o->no_save, "Do not save the winner as a profile");
  sub->add_option("--reserve", o->request.reserve,
                  "Memory kept for the system when each candidate is planned (default: the "
                  "launch's reserve); also watch's warning level")
      ->option_text("SIZE");
  sub->add_option("--floor", o->request.floor,
                  "End the tune (the original server runs again) when MemAvailable falls "
                  "below this (default: half of the reserve, as watch)")
      ->option_text("SIZE");
  sub->add_option("--timeout", o->request.request_timeout_s,
                  "Seconds to wait for the answer to one request (default 600)")
      ->check(finite_range(0.001, 86400.0))
      ->option_text("SECONDS");
  sub->add_flag("--json", o->json, "Print one JSON document instead of the report");
  sub->footer(exit_code_footer(
      {{ExitCode::ok, "done, or the budget ended it (the winner saved)"},
       {ExitCode::failed,
        "no server launched, the memory floor ended it, or the state directory may not be "
        "believed"},
       {ExitCode::usage},
       {ExitCode::server_failed,
        "a candidate failed to start or to answer (the original runs again), or the original "
        "did not start again"},
       {ExitCode::interrupted, "interrupted (SIGINT): the original runs again; --resume goes on"},
       {ExitCode::terminated, "terminated (SIGTERM): the same"}}));
  return [o](Context& ctx) { return run(*o, ctx); };
}

}  // namespace gb10tune::cli
