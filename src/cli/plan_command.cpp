#include "plan_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <set>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/launch/model_discovery.hpp"
#include "gb10tune/launch/plan_model.hpp"
#include "gb10tune/launch/target_machine.hpp"
#include "gb10tune/launch/what_fits.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/render/plan_ahead_render.hpp"
#include "gb10tune/server/known_build.hpp"
#include "gb10tune/util/line_printer.hpp"
#include "gb10tune/util/strings.hpp"
#include "number_option.hpp"
#include "setting_options.hpp"

namespace gb10tune::cli {

namespace {

struct PlanOptions {
  std::string model;
  std::string machine = "this";
  std::uint32_t max_slots = 4;
  double timeout_s = 120;
  bool json = false;
  bool no_cache = false;
  double bandwidth_gbps = 0;  // --bandwidth; 0: the machine's own figure
  launch::LaunchRequest request;
};

// The remote read's bounds, and its progress as one status line on stderr.
http::RemoteOptions remote_options(const PlanOptions& o, Context& ctx, LinePrinter& printer) {
  http::RemoteOptions remote;
  remote.env = ctx.env;
  remote.limits.deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_s * 1000.0));
  if (const auto dir = platform::cache_dir(ctx.env); dir && !o.no_cache) {
    remote.cache_dir = *dir / "headers";
  }
  remote.progress = [&printer](std::uint64_t fetched, std::uint64_t size) {
    printer.status(fmt::format("gb10tune plan: reading the header: {} of {}", format_bytes(fetched),
                               format_bytes(size)));
  };
  return remote;
}

// The workers' --rpc list.
std::string worker_list(const std::vector<rpc::WorkerInfo>& workers) {
  std::string list;
  for (const rpc::WorkerInfo& worker : workers) {
    list += (list.empty() ? "" : ",") + worker.endpoint.to_string();
  }
  return list;
}

// The build a plan assumes: the binary the llama_server setting names when given, else the
// compiled-in flag set (with --rpc for a pair over RPC), with the machine's backend.
std::optional<launch::PlanStandIns::Build> assumed_build(const PlanOptions& o,
                                                         const launch::TargetMachine& machine) {
  if (o.request.values.contains("llama_server")) {
    return std::nullopt;
  }
  const bool rpc = machine.nodes > 1;
  return launch::PlanStandIns::Build{
      rpc ? server::assumed_rpc_build_flags() : server::assumed_build_flags(),
      fmt::format("llama-server of {}{} (its flags assumed, no binary)", server::kAssumedBuildName,
                  rpc ? " with the RPC backend" : ""),
      {machine.backend == "cuda", "assumed from the machine's backend, " + machine.backend}};
}

// The planner's context for `machine` (a described machine's GPUs answered by `described`);
// its notes are said once each on stderr.
launch::PlannerContext plan_context(Context& ctx, const launch::TargetMachine& machine,
                                    const launch::PlanStandIns& stand_ins,
                                    gpu::GpuBackend* described,
                                    std::shared_ptr<std::set<std::string>> said) {
  launch::PlannerContext context{
      ctx.env, machine.live ? ctx.sysroot : launch::machine_sysroot(machine),
      machine.live ? ctx.gpu : described,
      [&ctx, said](launch::NoteKind kind, const std::string& text) {
        if (said->insert(text).second) {
          *ctx.err << (kind == launch::NoteKind::warning ? "warning: " : "gb10tune plan: ") << text
                   << "\n";
        }
      }};
  context.stand_ins = &stand_ins;
  return context;
}

// The model plan reads: FILE|URL, -m FILE, or the one main *.gguf of --models-dir (as launch
// finds it). A usage Error for two different models or none.
Expected<std::string> model_to_plan(const PlanOptions& o) {
  const auto text = [&o](const char* key) {
    const auto it = o.request.values.find(key);
    return it != o.request.values.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string with_m = text("model");
  if (!o.model.empty() && !with_m.empty() && o.model != with_m) {
    return Error{fmt::format("two models were given ({} with -m, and {}); plan reads one: give "
                             "it once, as FILE|URL or with -m.",
                             with_m, o.model),
                 ExitCode::usage};
  }
  if (!o.model.empty() || !with_m.empty()) {
    return o.model.empty() ? with_m : o.model;
  }
  if (const std::string dir = text("models_dir"); !dir.empty()) {
    auto folder = launch::scan_models_folder(dir);
    if (!folder) {
      return folder.error();
    }
    auto picked = launch::pick_model(*folder, dir);
    if (!picked) {
      return picked.error();
    }
    return picked->path.string();
  }
  return Error{
      "give the model: gb10tune plan FILE|URL, -m FILE or --models-dir DIR (the one "
      "main *.gguf there).",
      ExitCode::usage};
}

ExitCode run(PlanOptions& o, Context& ctx) {
  auto chosen = model_to_plan(o);
  if (!chosen) {
    return report_failure(ctx, chosen.error());
  }
  o.model = *chosen;
  o.request.values.erase("model");
  o.request.values.erase("models_dir");
  auto machine = launch::find_target_machine(o.machine, ctx.sysroot, ctx.env);
  if (!machine) {
    return report_failure(ctx, machine.error());
  }
  const auto workers = launch::described_workers(*machine);
  if (!workers.empty()) {
    o.request.rpc = worker_list(workers);  // the head's --rpc, as launch --rpc would take it
  }
  if (o.bandwidth_gbps > 0) {
    launch::give_bandwidth(*machine, o.bandwidth_gbps);
  }
  if (machine->reserve && !o.request.values.contains("reserve")) {
    o.request.values["reserve"] = *machine->reserve;
  }
  LinePrinter printer(*ctx.err, ctx.err_redraws(), ctx.err_columns);
  auto model = launch::read_plan_model(o.model, remote_options(o, ctx, printer));
  printer.finish();
  if (!model) {
    return report_failure(ctx, model.error());
  }
  for (const launch::PlannedFile& file : model->files) {
    if (!file.cache_problem.empty()) {
      *ctx.err << "warning: the header of " << file.name
               << " was not cached: " << file.cache_problem << "\n";
    }
  }
  const launch::PlanStandIns stand_ins{
      model->candidate, model->facts, assumed_build(o, *machine),
      workers.empty() ? std::nullopt : std::optional<std::vector<rpc::WorkerInfo>>(workers)};
  launch::DescribedGpuBackend described(machine->discrete_gpus);
  const auto context =
      plan_context(ctx, *machine, stand_ins, machine->discrete_gpus.empty() ? nullptr : &described,
                   std::make_shared<std::set<std::string>>());
  auto fits = launch::plan_what_fits(o.request, context, *machine, o.max_slots);
  if (!fits) {
    return report_failure(ctx, fits.error());
  }
  const std::string build =
      stand_ins.build ? stand_ins.build->label : fits->launch.argv.front() + " (its --help read)";
  const render::PlanAheadView view{&*model, &*machine, build, &*fits};
  if (o.json) {
    *ctx.out << render::dump_document(render::plan_ahead_json(view));
  } else {
    *ctx.out << render::render_plan_ahead(view, ctx.out_style());
  }
  return fits->launch.fits || !fits->launch.available_bytes ? ExitCode::ok
                                                            : ExitCode::memory_refused;
}

}  // namespace

Runner setup_plan(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Plan a model before downloading it, for this machine or another: read only its GGUF "
      "header (a local file, whole or header-only, a split model, or an http(s):// URL read "
      "with range requests), plan it with launch's own planner, and print for 1…N slots the "
      "largest "
      "context per slot that fits (KV f16 and q8_0), the decode ceiling and what launch would "
      "choose. No llama-server binary is needed.");
  sub->add_option("model", o->model,
                  "The model: a .gguf file or an http(s):// URL (its first shard "
                  "for a split model); or give -m FILE, or --models-dir DIR for the one main "
                  "*.gguf there")
      ->option_text("FILE|URL");
  sub->add_option("--machine", o->machine,
                  "Plan for: this (default), gb10 (one DGX Spark), gb10x2, or a JSON "
                  "description (docs/plan.md)")
      ->option_text("this|gb10|gb10x2|FILE");
  sub->add_option("--max-slots", o->max_slots, "Rows of the table: 1…N slots (default 4)")
      ->check(integer_range(1, 64))
      ->option_text("N");
  sub->add_option("--read-timeout", o->timeout_s,
                  "Seconds the whole header read may take, every shard included (default 120)")
      ->check(finite_range(1.0, 3600.0))
      ->option_text("SECONDS");
  sub->add_option("--bandwidth", o->bandwidth_gbps,
                  "The decode path's read bandwidth in GB/s for the decode ceiling (default: "
                  "the machine description's, or this machine's saved probe)")
      ->check(finite_range(0.001, 1e6))
      ->option_text("GBPS");
  sub->add_flag("--no-cache", o->no_cache,
                "Neither use nor save the cache of remote headers "
                "($XDG_CACHE_HOME/gb10tune/headers)");
  sub->add_flag("--json", o->json, "Print one JSON document instead of text");
  sub->add_option("--profile", o->request.profile,
                  "gb10-dense-mtp, gb10-moe, single-slot, or a JSON file (default: by model)")
      ->option_text("NAME|FILE");
  add_setting_options(*sub, o->request);
  sub->footer(
      "Without --llama-server the flags of " + std::string(server::kAssumedBuildName) +
      " are assumed, with the machine's backend.\n" +
      exit_code_footer({{ExitCode::ok, "planned"},
                        {ExitCode::failed,
                         "the header could not be read (a server that ignores Range, 404, a "
                         "redirect loop, a read past its bounds)"},
                        {ExitCode::usage, "usage error: a bad file, URL or machine description"},
                        {ExitCode::memory_refused, "what launch would choose does not fit"}}));
  return [o](Context& ctx) { return run(*o, ctx); };
}

}  // namespace gb10tune::cli
