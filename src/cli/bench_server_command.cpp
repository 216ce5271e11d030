#include "bench_server_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/bench/roofline.hpp"
#include "gb10tune/bench/server_endpoint.hpp"
#include "gb10tune/bench/server_result.hpp"
#include "gb10tune/bench/workload.hpp"
#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/report/server_bench_report.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/text_file.hpp"
#include "gb10tune/verify/verify.hpp"
#include "gb10tune/version.hpp"
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
  std::uint64_t max_context = 0;  // 0: refuse requests longer than a slot instead
  bool json = false;
};

// The launch record, when `launch` left one; nullopt (never an error) otherwise.
std::optional<launch::LaunchRecord> find_launch_record(const Context& ctx) {
  const auto dir = trust::private_state_dir(ctx.env);
  if (!dir) {
    if (dir.error().code != ExitCode::usage) {
      *ctx.err << "warning: launch record not read: " << dir.error().message << "\n";
    }
    return std::nullopt;
  }
  auto record = launch::read_launch_record(launch::StatePaths::under(*dir).record);
  if (!record) {
    return std::nullopt;
  }
  return std::move(*record);
}

// The argv of the one local llama-server whose --host/--port (or LLAMA_ARG_HOST/PORT) give
// `url`: a server started by hand, whose flags say how it drafts. nullopt when none or
// several match.
std::optional<std::vector<std::string>> local_server_argv(const Context& ctx,
                                                          const std::string& url) {
  std::optional<std::vector<std::string>> found;
  int matches = 0;
  for (const sys::ServerCandidate& process : sys::find_running_servers(ctx.sysroot)) {
    if (process.argv.empty()) {
      continue;
    }
    const auto env = sys::read_process_environ(ctx.sysroot, process.stat.pid);
    if (verify::url_from_process(process.argv, env ? &*env : nullptr) == url) {
      found = process.argv;
      ++matches;
    }
  }
  return matches == 1 ? found : std::nullopt;
}

// Bytes read per token: --model, else the launch record (same model), else the model file
// the server reports when it is readable here.
Expected<bench::RooflineInputs> roofline_inputs(const ServerOptions& options,
                                                const std::optional<launch::LaunchRecord>& record,
                                                const bench::ServerInfo& info, const Context& ctx) {
  bench::RooflineInputs inputs;
  const auto from_model = [&](const std::string& path) -> Expected<std::uint64_t> {
    // Every shard of a split model: the bytes read per token are the whole model's.
    const auto facts = model::read_model(path);
    if (!facts) {
      return facts.error();
    }
    return facts->bytes_read_per_token;
  };
  if (!options.model.empty()) {
    const auto bytes = from_model(options.model);
    if (!bytes) {
      return Error{fmt::format("--model {}: {}", options.model, bytes.error().message),
                   ExitCode::usage};
    }
    inputs.bytes_per_token = *bytes;
    inputs.bytes_source = "--model";
  } else if (record && record->bytes_per_token > 0 &&
             (info.model_path.empty() || record->model_path == info.model_path)) {
    inputs.bytes_per_token = record->bytes_per_token;
    inputs.bytes_source = "launch record";
  } else if (!info.model_path.empty()) {
    if (const auto bytes = from_model(info.model_path)) {
      inputs.bytes_per_token = *bytes;
      inputs.bytes_source = "the server's model file";
    }
  }
  if (options.bandwidth_gbps > 0) {
    inputs.bandwidth_bytes_per_second = options.bandwidth_gbps * 1e9;
    inputs.bandwidth_source = "--bandwidth";
  } else if (const auto dir = trust::private_state_dir(ctx.env)) {
    const auto path = *dir / "probe.json";
    if (const auto text = read_text_file(path)) {
      const auto doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
      if (const auto bandwidth = bench::device_read_bandwidth(doc)) {
        inputs.bandwidth_bytes_per_second = *bandwidth;
        inputs.bandwidth_source = "saved probe, cudaMalloc read";
      }
    }
  }
  return inputs;
}

// --save NAME must not replace an earlier result unless --force says so.
Status check_save_target(const ServerOptions& options, const Context& ctx) {
  if (options.force) {
    return {};
  }
  const auto dir = platform::state_dir(ctx.env);
  if (!dir) {
    return {};  // save_result reports the state directory's problem
  }
  const auto path = bench::saved_result_path(options.save, *dir);
  std::error_code ec;
  if (path && std::filesystem::exists(*path, ec)) {
    return Error{fmt::format("--save {}: {} already holds a saved result; choose another name, "
                             "or pass --force to replace it",
                             options.save, path->string()),
                 ExitCode::usage};
  }
  return {};
}

Status save_result(const nlohmann::json& doc, const std::string& name, Context& ctx) {
  const auto dir = trust::private_state_dir(ctx.env);
  if (!dir) {
    return Error{fmt::format("--save {}: {}", name, dir.error().message), ExitCode::failed};
  }
  const auto path = bench::saved_result_path(name, *dir);
  if (!path) {
    return path.error();
  }
  for (const std::filesystem::path& folder : {*dir, path->parent_path()}) {
    if (const Status made = trust::ensure_private_dir(folder); !made) {
      return made.error();
    }
  }
  if (const Status written = platform::write_file_atomic(*path, report::dump_document(doc));
      !written) {
    return written.error();
  }
  *ctx.err << "result saved as " << name << " (" << path->string() << ")\n";
  return {};
}

// Says why it failed (stderr, and with --json a document on stdout); returns the exit code.
ExitCode fail_bench_server(Context& ctx, const Error& error) {
  return report_failure(ctx, error);
}

ExitCode run(const ServerOptions& options, Context& ctx) {
  if (!options.save.empty()) {
    // Check the name, and that nothing would be replaced, before spending minutes on the run.
    if (const Status valid = bench::check_result_name(options.save); !valid) {
      return fail_bench_server(ctx, valid.error());
    }
    if (const Status free = check_save_target(options, ctx); !free) {
      return fail_bench_server(ctx, free.error());
    }
  }
  auto workload = bench::load_workload(options.prompts);
  if (!workload) {
    return fail_bench_server(ctx, workload.error());
  }
  const std::optional<launch::LaunchRecord> record = find_launch_record(ctx);
  std::string url = options.url;
  if (url.empty()) {
    if (!record) {
      return fail_bench_server(
          ctx, Error{"no --url and no launch record: give the server's address, such as "
                     "--url http://127.0.0.1:8080, or start it with `gb10tune launch`",
                     ExitCode::usage});
    }
    url = record->url;
  }
  const auto endpoint = ctx.connect_server(
      url, std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_seconds * 1000)));
  if (!endpoint) {
    return fail_bench_server(ctx, endpoint.error());
  }
  const auto info = endpoint->info();
  if (!info) {
    return fail_bench_server(ctx, info.error());
  }
  // A request longer than a slot fails with HTTP 400 in the middle of the run: trim or refuse
  // before the first request.
  const auto fitted = bench::fit_workload(*workload, options.max_context, info->n_ctx_per_slot);
  if (!fitted) {
    return fail_bench_server(ctx, fitted.error());
  }
  if (!fitted->empty()) {
    *ctx.err << *fitted << "\n";
  }
  const auto roof_inputs = roofline_inputs(options, record, *info, ctx);
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
  std::ostream* err = ctx.err;
  inputs.progress = [err](int concurrency, int round, int rounds, bool warmup,
                          const std::vector<bench::RequestSample>& samples) {
    *err << report::render_round_progress(concurrency, round, rounds, warmup, samples) << "\n"
         << std::flush;
  };
  *ctx.err << fmt::format("benchmarking {} with {} ({} requests)\n", url, workload->source,
                          workload->requests.size());
  auto levels = bench::run_server_bench(inputs);
  if (!levels) {
    return fail_bench_server(ctx, levels.error());
  }

  bench::ServerBenchResult result;
  bench::Provenance& p = result.provenance;
  p.date = ctx.now_iso8601();
  p.tool_version = std::string(kToolVersion);
  p.url = url;
  p.model_path = info->model_path;
  p.build_info = info->build_info;
  p.total_slots = info->total_slots;
  p.n_ctx_per_slot = info->n_ctx_per_slot;
  p.props = bench::trimmed_props(info->props);
  p.settings = bench::settings_from_props(info->props);
  const bool launched = record && record->url == url;
  if (launched) {
    p.launch_argv = record->argv;
    for (auto& [key, value] : bench::settings_from_argv(record->argv)) {
      p.settings[key] = value;
    }
  }
  // /slots says what the server runs; /props only shows per-request defaults. The launch
  // record (or, for a server started by hand, its command line) says which type and depth.
  std::optional<std::vector<std::string>> argv;
  std::string argv_source = "launch record";
  if (launched) {
    argv = record->argv;
  } else if ((argv = local_server_argv(ctx, url))) {
    argv_source = "the server's command line";
  }
  const bench::SpeculativeSetting spec = bench::resolve_speculative(
      info->slots_reported, info->slots_speculative, argv ? &*argv : nullptr, argv_source);
  p.speculative = spec.on;
  p.spec_type = spec.type;
  p.draft_n_max = spec.n_max;
  p.spec_source = spec.source;
  for (auto& [key, value] : bench::settings_from_speculative(spec)) {
    p.settings[key] = value;
  }
  // The topology (llama.cpp RPC workers): a setting like any other for compare.
  if (argv) {
    p.rpc_workers = bench::rpc_workers_from_argv(*argv);
    p.rpc_source = argv_source;
    for (auto& [key, value] : bench::settings_from_rpc(p.rpc_workers)) {
      p.settings[key] = value;
    }
  }
  result.workload_source = workload->source;
  result.workload_requests = workload->requests.size();
  result.workload_conversations = workload->conversations;
  result.options = inputs.options;
  result.levels = std::move(*levels);
  const bench::LevelSummary head = bench::summarize_level(result.levels.front());
  const bench::MetricSummary& mean_len =
      bench::metric_of(head, bench::Metric::mean_accepted_length);
  result.roofline = bench::compute_roofline(
      *roof_inputs, bench::metric_of(head, bench::Metric::decode_tps).stats.median,
      mean_len.stats.count > 0 ? std::optional<double>(mean_len.stats.median) : std::nullopt);

  const nlohmann::json doc = bench::result_to_json(result);
  Status saved;
  if (!options.save.empty()) {
    // A result saved meanwhile (another run) is not replaced either.
    saved = check_save_target(options, ctx);
    if (saved) {
      saved = save_result(doc, options.save, ctx);
    }
  }
  if (options.json) {
    // One document: the result, and why it was not saved when it was not.
    nlohmann::json printed = doc;
    if (!saved) {
      report::add_failure(printed, to_int(saved.error().code), saved.error().message);
    }
    *ctx.out << report::dump_document(printed);
  } else {
    *ctx.out << report::render_server_bench_text(result, ctx.out_style());
  }
  if (!saved) {
    *ctx.err << "gb10tune bench server: " << saved.error().message << "\n";
    return saved.error().code;
  }
  return ExitCode::ok;
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
      ->check(CLI::Range(1, 100000));
  sub->add_option("--warmup", options->warmup, "Rounds run first and discarded (default 1)")
      ->check(CLI::Range(0, 1000));
  sub->add_option("--concurrency", options->concurrency,
                  "Parallel sessions, one level or a list such as 1,2,3 (default 1)")
      ->delimiter(',')
      ->check(CLI::Range(1, 256));
  sub->add_option("--bandwidth", options->bandwidth_gbps,
                  "Device bandwidth in GB/s for the ceiling (default: the saved probe result)")
      ->check(finite_range(0.001, 1e6));
  sub->add_option("--model", options->model,
                  "The served GGUF, for the bytes read per token (default: the launch record)")
      ->option_text("FILE");
  sub->add_option("--max-context", options->max_context,
                  "Leave out the requests needing more than N tokens (context + max_tokens, "
                  "estimated); default: refuse a workload longer than the server's slot")
      ->check(CLI::PositiveNumber)
      ->option_text("N");
  sub->add_option("--timeout", options->timeout_seconds,
                  "Seconds to wait for the answer to one request (default 600)")
      ->check(finite_range(0.001, 86400.0));
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
