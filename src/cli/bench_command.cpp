#include "bench_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "bench_compare_command.hpp"
#include "bench_server_command.hpp"
#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/bench/measure_bandwidth.hpp"
#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/render/bench_render.hpp"
#include "number_option.hpp"
#include "renamed_option.hpp"
#include "size_option.hpp"
#include "state_save.hpp"

namespace gb10tune::cli {

namespace {

struct BenchOptions {
  bool json = false;
  bool quick = false;
  bool sweep = false;
  std::string size;
  std::string reserve;
  int samples = 0;
  int warmup = 0;
  double peak_gbps = 0;
  int device = 0;
  std::vector<std::string> allocators;
  std::vector<std::string> operations;
  std::vector<RenamedOption> renamed;
};

// Turns the command-line strings into BandwidthOptions; an Error (exit 2) names the option.
Expected<bench::BandwidthOptions> to_options(const BenchOptions& in) {
  bench::BandwidthOptions out;
  out.quick = in.quick;
  out.sweep = in.sweep;
  out.samples = in.samples;
  out.warmup = in.warmup;
  out.device = in.device;
  const auto size = size_option("--size", in.size, 0);
  if (!size) {
    return size.error();
  }
  if (!in.size.empty() && *size == 0) {
    return Error{"--size 0 measures nothing; give a buffer size such as 1G", ExitCode::usage};
  }
  out.buffer_bytes = *size;
  const auto reserve = size_option("--reserve", in.reserve, out.reserve_bytes);
  if (!reserve) {
    return reserve.error();
  }
  out.reserve_bytes = *reserve;
  for (const std::string& id : in.allocators) {
    const auto allocator = kernels::parse_allocator(id);
    if (!allocator) {
      return Error{fmt::format("--allocators: unknown allocator '{}'; use device, managed, "
                               "managed_prefetch, managed_advise, pinned_host, pageable_malloc "
                               "or pageable_mmap",
                               id),
                   ExitCode::usage};
    }
    out.allocators.push_back(*allocator);
  }
  for (const std::string& id : in.operations) {
    const auto operation = kernels::parse_operation(id);
    if (!operation) {
      return Error{fmt::format("--operations: unknown operation '{}'; use read, write, copy or "
                               "memcpy_d2d",
                               id),
                   ExitCode::usage};
    }
    out.operations.push_back(*operation);
  }
  return out;
}

ExitCode run(const BenchOptions& in, Context& ctx) {
  note_renamed(in.renamed, ctx);
  const auto options = to_options(in);
  if (!options) {
    return report_failure(ctx, options.error());
  }
  const std::optional<double> peak =
      in.peak_gbps > 0 ? std::optional<double>(in.peak_gbps * 1e9) : std::nullopt;
  const auto run = run_bandwidth_job(*options, peak, ctx, true);
  if (!run) {
    return report_failure(ctx, run.error());
  }
  *ctx.err << fmt::format("measured in {:.1f} s\n", run->wall_seconds);
  const ExitCode code = run->interrupted ? after_interrupt(ExitCode::interrupted)
                        : run->all_valid ? ExitCode::ok
                                         : ExitCode::failed;
  auto doc = render::bandwidth_to_json(*run);
  if (code == ExitCode::ok && !in.sweep) {
    save_to_state(ctx, "bench.json", "bench result", doc, false);  // for gb10tune report
  }
  if (in.json) {
    if (code != ExitCode::ok) {
      render::add_failure(doc, to_int(code),
                          run->interrupted ? "interrupted: the figures are partial"
                                           : "a case failed or a figure did not validate");
    }
    *ctx.out << render::dump_document(doc);
  } else {
    *ctx.out << render::render_bandwidth_text(*run, ctx.out_style());
  }
  return code;
}

}  // namespace

Expected<bench::BandwidthRun> run_bandwidth_job(const bench::BandwidthOptions& options,
                                                std::optional<double> peak_override, Context& ctx,
                                                bool progress) {
  platform::InterruptGuard interrupt;
  bench::BandwidthEnvironment environment;
  environment.sysroot = &ctx.sysroot;
  environment.gpu = ctx.gpu;
  environment.runner = ctx.bandwidth_runner;
  environment.cancel = &interrupt.flag();
  if (progress) {
    std::ostream* err = ctx.err;
    environment.progress = [err](int index, int total, const bench::CaseOutcome& outcome) {
      *err << render::render_progress_line(index, total, outcome) << "\n" << std::flush;
    };
  }
  return bench::measure_bandwidth(options, peak_override, environment);
}

Runner setup_bench(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Measure GPU memory bandwidth per allocation path: the same kernels on cudaMalloc, "
      "managed, pinned-host and pageable memory (read, write, copy), with a cudaMemcpy "
      "reference.");
  sub->add_flag("--json", options->json, "Print one JSON document (every sample) instead of text");
  sub->add_flag("--quick", options->quick,
                "A ~1 s subset on the full bench's buffers (pinned: 256 MiB): cudaMalloc "
                "read/copy, memcpy, managed and pinned reads (5 samples each)");
  sub->add_flag("--sweep", options->sweep,
                "Also read buffers from 1 MiB up to --size: shows the cache-to-DRAM knee");
  sub->add_option("--size", options->size, "Bytes per buffer (default 1G; at least 4x L2)")
      ->option_text("SIZE");
  sub->add_option("--samples", options->samples, "Measured (timed) runs per case (default 10)")
      ->check(integer_range(1, 100000))
      ->option_text("N");
  sub->add_option("--warmup", options->warmup,
                  "Exactly this many untimed runs first (default: until the run time is steady, "
                  "at least 3)")
      ->check(integer_range(1, 100000))
      ->option_text("N");
  sub->add_option("--peak", options->peak_gbps,
                  "Nominal memory bandwidth in GB/s (default: from the device table)")
      ->check(finite_range(0.001, 1e6))
      ->option_text("GBPS");
  sub->add_option("--reserve", options->reserve,
                  "Host memory kept for the system (default 12GB): host buffers never exceed "
                  "MemAvailable minus this")
      ->option_text("SIZE");
  sub->add_option("--cuda-device", options->device,
                  "The CUDA device to measure, by index (default 0)")
      ->check(integer_range(0, 1023))
      ->option_text("N");
  // --device is llama.cpp's device list (rpc start); here it was the CUDA index.
  keep_renamed(
      sub->add_option("--device", options->device)->check(finite_range(0, 1023, "--device")),
      "--cuda-device", options->renamed);
  sub->add_option("--allocators", options->allocators,
                  "Only these: device, managed, managed_prefetch, managed_advise, pinned_host, "
                  "pageable_malloc, pageable_mmap")
      ->delimiter(',');
  sub->add_option("--operations", options->operations, "Only these: read, write, copy, memcpy_d2d")
      ->delimiter(',');
  sub->footer("Without a subcommand: the bandwidth bench.\n" +
              exit_code_footer({{ExitCode::ok},
                                {ExitCode::failed, "a case failed or a figure did not validate"},
                                {ExitCode::usage},
                                {ExitCode::no_gpu, "no usable GPU"},
                                {ExitCode::interrupted, "interrupted (SIGINT), everything freed"},
                                {ExitCode::terminated, "terminated (SIGTERM), the same"}}));

  // The server benchmarks are subcommands; `bench [options]` alone stays the bandwidth bench.
  std::vector<std::pair<CLI::App*, Runner>> nested;
  for (auto setup : {setup_bench_server, setup_bench_compare}) {
    Runner runner = setup(*sub);
    nested.emplace_back(sub->get_subcommands({}).back(), std::move(runner));
  }
  return [options, sub, nested](Context& ctx) {
    for (const auto& [command, runner] : nested) {
      if (!command->parsed()) {
        continue;
      }
      // Bandwidth options before `server`/`compare` would be silently ignored: refuse them.
      for (const CLI::Option* option : sub->get_options()) {
        if (option->count() > 0 && option->get_name() != "--help") {
          return report_failure(
              ctx, Error{fmt::format("{} is a bandwidth-bench option; put the options of `bench "
                                     "{}` after its name",
                                     option->get_name(), command->get_name()),
                         ExitCode::usage});
        }
      }
      return runner(ctx);
    }
    return run(*options, ctx);
  };
}

}  // namespace gb10tune::cli
