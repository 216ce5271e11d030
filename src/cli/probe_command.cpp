#include "probe_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "bench_command.hpp"
#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/probe/probe.hpp"
#include "gb10tune/render/bench_render.hpp"
#include "gb10tune/render/probe_render.hpp"
#include "size_option.hpp"
#include "state_save.hpp"

namespace gb10tune::cli {

namespace {

struct ProbeOptions {
  bool json = false;
  bool no_save = false;
  bool quick_bench = false;
  std::string llama_server;
  std::string reserve;      // --reserve: kept free in host memory, as launch
  std::string gpu_reserve;  // --gpu-reserve: kept free on each discrete GPU, as launch
};

ExitCode run(const ProbeOptions& options, Context& ctx) {
  probe::ProbeInputs inputs;
  inputs.sysroot = &ctx.sysroot;
  inputs.env = &ctx.env;
  inputs.gpu = ctx.gpu;
  if (!options.llama_server.empty()) {
    inputs.llama_server = options.llama_server;
  }
  inputs.fallback_arch = ctx.sysroot.is_live() ? ctx.uname_machine : std::string();
  inputs.now_iso8601 = ctx.now_iso8601();
  const auto reserve = size_option("--reserve", options.reserve, plan::kDefaultReserveBytes);
  const auto gpu_reserve =
      size_option("--gpu-reserve", options.gpu_reserve, plan::kDefaultGpuReserveBytes);
  if (!reserve || !gpu_reserve) {
    return report_failure(ctx, !reserve ? reserve.error() : gpu_reserve.error());
  }
  inputs.reserve_bytes = *reserve;
  inputs.gpu_reserve_bytes = *gpu_reserve;
  probe::ProbeResult result = probe::run_probe(inputs);
  if (options.quick_bench) {
    bench::BandwidthOptions quick;
    quick.quick = true;
    if (auto run = run_bandwidth_job(quick, std::nullopt, ctx, false)) {
      result.bandwidth.summary = render::render_bandwidth_summary(*run);
      result.bandwidth.run = std::move(*run);
    } else {
      result.bandwidth.summary = "not run: " + run.error().message;
    }
  }

  const nlohmann::json doc = render::probe_to_json(result);
  if (options.json) {
    nlohmann::json printed = doc;
    if (!result.errors.empty()) {
      render::add_failure(printed, to_int(ExitCode::failed),
                          fmt::format("{}", fmt::join(result.errors, "; ")));
    }
    *ctx.out << render::dump_document(printed);
  } else {
    *ctx.out << render::render_probe_text(result, ctx.out_style());
  }
  if (!options.no_save) {
    save_to_state(ctx, "probe.json", "probe result", doc, true);
  }
  for (const std::string& error : result.errors) {
    *ctx.err << "error: " << error << "\n";
  }
  return result.errors.empty() ? ExitCode::ok : ExitCode::failed;
}

}  // namespace

Runner setup_probe(CLI::App& app) {
  auto options = std::make_shared<ProbeOptions>();
  CLI::App* sub = app.add_subcommand(
      "probe",
      "Describe this machine for llama.cpp: OS, CPU features, memory budget, GPU, the exact "
      "llama.cpp build line, advice, and the llama-server binaries found.");
  sub->add_flag("--json", options->json, "Print one JSON document instead of text");
  sub->add_flag("--no-save", options->no_save, "Do not save the result under the state directory");
  sub->add_flag("--quick-bench", options->quick_bench,
                "Also run a ~1 s GPU bandwidth check (gb10tune bench --quick)");
  sub->add_option("--llama-server", options->llama_server, "Also report this llama-server binary")
      ->option_text("PATH");
  sub->add_option("--reserve", options->reserve,
                  "Host memory kept for the system in the budget shown (default 12GB, as launch)")
      ->option_text("SIZE");
  sub->add_option("--gpu-reserve", options->gpu_reserve,
                  "Memory kept free on each discrete GPU in the budgets shown (default 1GiB, as "
                  "launch)")
      ->option_text("SIZE");
  sub->footer(
      "The JSON result is saved to $XDG_STATE_HOME/gb10tune/probe.json (default "
      "~/.local/state/gb10tune) for launch and verify.\n" +
      exit_code_footer({{ExitCode::ok},
                        {ExitCode::failed, "a /proc file could not be read"},
                        {ExitCode::usage}}));
  return [options](Context& ctx) { return run(*options, ctx); };
}

}  // namespace gb10tune::cli
