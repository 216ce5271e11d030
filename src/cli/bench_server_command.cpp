#include "bench_server_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/bench/server_bench_setup.hpp"
#include "gb10tune/bench/server_result.hpp"
#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/render/bench_server_render.hpp"
#include "gb10tune/render/document.hpp"
#include "number_option.hpp"

namespace gb10tune::cli {

namespace {

struct ServerOptions {
  std::string url;
  std::string prompts;
  int samples = 0;
  int warmup = 1;
  std::vector<int> concurrency{1};
  double bandwidth_gbps = 0;
  std::string model;
  std::string save;
  bool force = false;  // --save may replace an earlier result
  double timeout_seconds = 600;
  std::uint64_t max_context = 0;  // 0: only the requests longer than a slot are left out
  bool json = false;
};

// Says why it failed (stderr, and with --json a document on stdout); returns the exit code.
ExitCode fail_bench_server(Context& ctx, const Error& error) {
  return report_failure(ctx, error);
}

// The server's address: --url, else the launch record's.
Expected<std::string> server_url(const ServerOptions& options,
                                 const std::optional<launch::LaunchRecord>& record) {
  if (!options.url.empty()) {
    return options.url;
  }
  if (!record) {
    return Error{
        "no --url and no launch record: give the server's address, such as "
        "--url http://127.0.0.1:8080, or start it with `gb10tune launch`",
        ExitCode::usage};
  }
  return record->url;
}

// Saves (with --save) and prints the result; the exit code (a failed save: its error's).
ExitCode print_result(const ServerOptions& options, const bench::ServerBenchResult& result,
                      Context& ctx) {
  const nlohmann::json doc = bench::result_to_json(result);
  Status saved;
  if (!options.save.empty()) {
    // A result saved meanwhile (another run) is not replaced either.
    saved = bench::check_save_target(options.save, ctx.env, options.force);
    if (saved) {
      if (const auto path = bench::save_result(doc, options.save, ctx.env)) {
        *ctx.err << "result saved as " << options.save << " (" << path->string() << ")\n";
      } else {
        saved = path.error();
      }
    }
  }
  if (options.json) {
    // One document: the result, and why it was not saved when it was not.
    nlohmann::json printed = doc;
    if (!saved) {
      render::add_failure(printed, to_int(saved.error().code), saved.error().message);
    }
    *ctx.out << render::dump_document(printed);
  } else {
    *ctx.out << render::render_server_bench_text(result, ctx.out_style());
  }
  if (!saved) {
    *ctx.err << "gb10tune bench server: " << saved.error().message << "\n";
    return saved.error().code;
  }
  return ExitCode::ok;
}

ExitCode run(const ServerOptions& options, Context& ctx) {
  if (!options.save.empty()) {
    // Check the name, and that nothing would be replaced, before spending minutes on the run.
    if (const Status valid = bench::check_result_name(options.save); !valid) {
      return fail_bench_server(ctx, valid.error());
    }
    if (const Status free = bench::check_save_target(options.save, ctx.env, options.force); !free) {
      return fail_bench_server(ctx, free.error());
    }
  }
  auto workload = bench::load_workload(options.prompts);
  if (!workload) {
    return fail_bench_server(ctx, workload.error());
  }
  std::ostream* err = ctx.err;
  const auto warn = [err](const std::string& text) { *err << "warning: " << text << "\n"; };
  const std::optional<launch::LaunchRecord> record = bench::find_launch_record(ctx.env, warn);
  const auto url = server_url(options, record);
  if (!url) {
    return fail_bench_server(ctx, url.error());
  }
  const auto endpoint = ctx.connect_server(
      *url, std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_seconds * 1000)));
  if (!endpoint) {
    return fail_bench_server(ctx, endpoint.error());
  }
  const auto info = endpoint->info();
  if (!info) {
    return fail_bench_server(ctx, info.error());
  }
  const auto fitted = bench::fit_workload_to_server(*workload, options.max_context,
                                                    info->n_ctx_per_slot, endpoint->count_prompt);
  if (!fitted) {
    return fail_bench_server(ctx, fitted.error());
  }
  for (const std::string& note : *fitted) {
    *ctx.err << "gb10tune bench server: " << note << "\n";
  }
  const auto roof_inputs =
      bench::roofline_inputs({options.model, options.bandwidth_gbps, ctx.env}, record, *info);
  if (!roof_inputs) {
    return fail_bench_server(ctx, roof_inputs.error());
  }

  platform::InterruptGuard interrupt;
  bench::ServerRunInputs inputs;
  inputs.workload = &*workload;
  inputs.options.concurrency = options.concurrency;
  inputs.options.samples = options.samples;
  inputs.options.warmup = options.warmup;
  inputs.complete = endpoint->complete;
  inputs.clock = ctx.clock_seconds;
  inputs.cancel = &interrupt.flag();
  inputs.progress = [err](int concurrency, int round, int rounds, bool warmup,
                          const std::vector<bench::RequestSample>& samples) {
    *err << render::render_round_progress(concurrency, round, rounds, warmup, samples) << "\n"
         << std::flush;
  };
  *ctx.err << fmt::format("benchmarking {} with {} ({} requests)\n", *url, workload->source,
                          workload->requests.size());
  auto levels = bench::run_server_bench(inputs);
  if (!levels) {
    return fail_bench_server(ctx, levels.error());
  }
  bench::ServerBenchResult result;
  result.provenance = bench::describe_server(*info, *url, record, ctx.sysroot, ctx.now_iso8601());
  result.workload_source = workload->source;
  result.workload_requests = workload->requests.size();
  result.workload_conversations = workload->conversations;
  result.options = inputs.options;
  result.levels = std::move(*levels);
  result.roofline = bench::roofline_of(*roof_inputs, result.levels.front());
  return print_result(options, result, ctx);
}

}  // namespace

Runner setup_bench_server(CLI::App& bench) {
  auto options = std::make_shared<ServerOptions>();
  CLI::App* sub = bench.add_subcommand(
      "server",
      "Measure a running llama-server on a multi-turn writing and coding workload: prefill, "
      "decode, time to first token, draft acceptance, per-session and total decode at each "
      "concurrency level, and the measured decode rate as % of the bandwidth ceiling.");
  sub->add_option("--url", options->url, "The server (default: the one `gb10tune launch` started)")
      ->option_text("URL");
  sub->add_option("--prompts", options->prompts,
                  "Your own workload: JSON lines (see docs/server-bench.md)")
      ->option_text("FILE");
  sub->add_option("--samples", options->samples,
                  "Measured rounds per concurrency level (default: one per workload request)")
      ->check(integer_range(1, 100000))
      ->option_text("N");
  sub->add_option("--warmup", options->warmup, "Rounds run first and discarded (default 1)")
      ->check(integer_range(0, 1000))
      ->option_text("N");
  sub->add_option("--concurrency", options->concurrency,
                  "Parallel sessions, one level or a list such as 1,2,3 (default 1)")
      ->delimiter(',')
      ->check(integer_range(1, 256))
      ->option_text("N");
  sub->add_option("--bandwidth", options->bandwidth_gbps,
                  "Device bandwidth in GB/s for the ceiling (default: the saved probe result)")
      ->check(finite_range(0.001, 1e6))
      ->option_text("GBPS");
  sub->add_option("--model", options->model,
                  "The served GGUF, for the bytes read per token (default: the launch record)")
      ->option_text("FILE");
  sub->add_option("--max-context", options->max_context,
                  "Leave out the requests needing more than N tokens (prompt + max_tokens, "
                  "counted by the server); those longer than the server's slot are always left "
                  "out")
      ->check(CLI::PositiveNumber)
      ->option_text("N");
  sub->add_option("--timeout", options->timeout_seconds,
                  "Seconds to wait for the answer to one request (default 600)")
      ->check(finite_range(0.001, 86400.0))
      ->option_text("SECONDS");
  sub->add_option("--save", options->save,
                  "Also save the result as NAME under the state directory, for bench compare")
      ->option_text("NAME");
  sub->add_flag("--force", options->force,
                "Go on past the refusal to replace a result saved under NAME (with --save)");
  sub->add_flag("--json", options->json, "Print one JSON document (every request) instead of text");
  sub->footer(
      "Figures are the server's own timings (time to first token = prompt_ms, without "
      "streaming).\n" +
      exit_code_footer({{ExitCode::ok},
                        {ExitCode::failed, "the server did not answer or a request failed"},
                        {ExitCode::usage},
                        {ExitCode::interrupted, "interrupted (SIGINT), nothing saved"},
                        {ExitCode::terminated, "terminated (SIGTERM), nothing saved"}}));
  return [options](Context& ctx) { return run(*options, ctx); };
}

}  // namespace gb10tune::cli
