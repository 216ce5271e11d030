#include "watch_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/watch/supervisor.hpp"
#include "gb10tune/watch/watch_events.hpp"
#include "gb10tune/watch/watch_setup.hpp"
#include "gb10tune/watch/watch_units.hpp"
#include "number_option.hpp"
#include "size_option.hpp"
#include "watch_outputs.hpp"

namespace gb10tune::cli {

namespace {

struct WatchOptions {
  double interval_s = 1;
  std::string warn;
  std::string floor;
  std::string hysteresis;
  double grace_s = 10;
  bool restart = false;
  double restart_delay_s = 5;
  double restart_max_delay_s = 300;
  int max_restarts = 5;
  bool wait = false;
  bool json = false;
  std::uint64_t max_samples = 0;
  bool once = false;
  bool act = false;  // with --once: stop the server below the floor, as a watch does
  std::string print;
  int verify_every_min = 15;
  std::string unit_dir;
  std::string replay_meminfo;  // hidden: a folder of meminfo files, one per sample
  WatchOutputOptions outputs;  // --metrics, --notify, --notify-format
};

// The bytes of a size option, nullopt when it was not given; a usage Error naming it.
Expected<std::optional<std::uint64_t>> given_size(const char* option, const std::string& value) {
  if (value.empty()) {
    return std::optional<std::uint64_t>();
  }
  const auto bytes = size_option(option, value, 0);
  if (!bytes) {
    return bytes.error();
  }
  return std::optional<std::uint64_t>(*bytes);
}

// --warn, --floor and --hysteresis as given.
Expected<watch::ThresholdChoice> threshold_choice(const WatchOptions& o) {
  const auto warn = given_size("--warn", o.warn);
  if (!warn) {
    return warn.error();
  }
  const auto floor = given_size("--floor", o.floor);
  if (!floor) {
    return floor.error();
  }
  const auto hysteresis = given_size("--hysteresis", o.hysteresis);
  if (!hysteresis) {
    return hysteresis.error();
  }
  return watch::ThresholdChoice{*warn, *floor, *hysteresis};
}

// MemTotal of the machine watched (of the first replayed file with --replay-meminfo); nullopt
// when it cannot be read (the watch then fails on its first sample, saying why).
std::optional<std::uint64_t> mem_total(const WatchOptions& o, Context& ctx) {
  auto source = o.replay_meminfo.empty()
                    ? Expected<watch::MemInfoSource>(watch::meminfo_from(ctx.sysroot))
                    : watch::meminfo_replay(o.replay_meminfo);
  if (!source) {
    return std::nullopt;
  }
  const auto info = (*source)();
  if (!info || info->total_bytes == 0) {
    return std::nullopt;
  }
  return info->total_bytes;
}

// How the supervisor runs, from the options.
watch::SupervisorOptions supervisor_options(const WatchOptions& o, watch::Thresholds thresholds) {
  watch::SupervisorOptions options;
  options.thresholds = thresholds;
  options.act = !o.once || o.act;  // a one-shot check acts only when asked
  options.restart = watch::restart_policy(o.restart && options.act, o.restart_delay_s,
                                          o.restart_max_delay_s, o.max_restarts);
  options.interval_s = o.interval_s;
  options.grace_s = o.grace_s;
  options.wait = o.wait;
  options.max_samples = o.once ? 1 : o.max_samples;
  return options;
}

// Prints each event as it comes: a text line, or a JSON line with --json.
std::function<void(const watch::Event&)> event_printer(Context& ctx, bool json) {
  return [&ctx, json](const watch::Event& event) {
    const std::string at = ctx.now_iso8601 ? ctx.now_iso8601() : "";
    *ctx.out << (json ? watch::render_event_json_line(event, at)
                      : watch::render_event_text(event, at));
    ctx.out->flush();
  };
}

// The options given that the unit's watch repeats, with their values.
std::vector<std::string> unit_watch_options(const CLI::App& sub) {
  std::vector<std::string> args;
  for (const char* name : {"--interval", "--warn", "--floor", "--hysteresis", "--grace",
                           "--restart-delay", "--restart-max-delay", "--max-restarts"}) {
    const CLI::Option* option = sub.get_option_no_throw(name);
    if (option != nullptr && option->count() > 0) {
      args.push_back(name);
      args.push_back(option->results().back());
    }
  }
  for (const char* name : {"--restart", "--json"}) {
    const CLI::Option* option = sub.get_option_no_throw(name);
    if (option != nullptr && option->count() > 0) {
      args.push_back(name);
    }
  }
  return args;
}

ExitCode print_units(const WatchOptions& o, const CLI::App& sub, Context& ctx) {
  const auto self = sys::read_process_exe(platform::Sysroot(), platform::current_pid());
  const watch::WatchUnitsInput input =
      watch::watch_units_input(self ? std::optional<std::string>(self->path) : std::nullopt,
                               unit_watch_options(sub), o.verify_every_min, ctx.env);
  const auto rendered = watch::render_watch_units(input);
  if (!rendered) {
    *ctx.err << "gb10tune watch: " << rendered.error().message << "\n";
    return rendered.error().code;
  }
  const std::vector<watch::UnitFile>& files = *rendered;
  if (o.unit_dir.empty()) {
    for (const watch::UnitFile& file : files) {
      *ctx.out << fmt::format("### {}\n{}\n", file.name, file.content);
    }
    return ExitCode::ok;
  }
  if (const Status created = watch::create_unit_dir(o.unit_dir); !created) {
    return report_failure(ctx, created.error(), true);
  }
  for (const watch::UnitFile& file : files) {
    const auto path = watch::write_unit_file(o.unit_dir, file);
    if (!path) {
      return report_failure(ctx, path.error(), true);
    }
    *ctx.out << "wrote " << path->string() << "\n";
  }
  *ctx.out << "then: systemctl --user daemon-reload && systemctl --user enable --now "
              "gb10tune-watch.service gb10tune-verify.timer\n";
  return ExitCode::ok;
}

ExitCode run_watch(const WatchOptions& o, const CLI::App& sub, Context& ctx) {
  if (o.print == "systemd") {
    return print_units(o, sub, ctx);
  }
  const auto dir = trust::private_state_dir(ctx.env);
  if (!dir) {
    return report_failure(ctx, Error{dir.error().message, dir.error().code}, true);
  }
  const launch::StatePaths paths = launch::StatePaths::under(*dir);
  watch::SystemServerControl control(ctx.sysroot, paths);
  const auto choice = threshold_choice(o);
  if (!choice) {
    return report_failure(ctx, choice.error(), true);
  }
  if (const auto total = mem_total(o, ctx)) {
    if (const Status within = watch::thresholds_within_memory(*choice, *total); !within) {
      return report_failure(ctx, within.error(), true);
    }
  }
  const auto first = watch::server_to_watch(control.pid_file(), o.wait);
  if (!first) {
    return report_failure(ctx, first.error(), true);
  }
  const auto thresholds = watch::resolve_thresholds(*choice, *first ? &(*first)->record : nullptr);
  if (!thresholds) {
    return report_failure(ctx, thresholds.error(), true);
  }
  auto meminfo = o.replay_meminfo.empty() ? watch::meminfo_from(ctx.sysroot)
                                          : watch::meminfo_replay(o.replay_meminfo);
  if (!meminfo) {
    return report_failure(ctx, meminfo.error(), true);
  }
  const auto outputs = start_watch_outputs(o.outputs, *thresholds,
                                           *first ? (*first)->record.expected_load_bytes : 0);
  if (!outputs) {
    return report_failure(ctx, outputs.error(), true);
  }
  watch::SteadyWatchClock clock;
  const auto emit = watch_emitter(*outputs, event_printer(ctx, o.json), ctx.now_iso8601);
  const auto on_sample = watch_sample_sink(*outputs);
  watch::GpuSources gpu = watch::gpu_sources(ctx.gpu, ctx.sysroot, ctx.env);
  watch::Supervisor supervisor(
      supervisor_options(o, *thresholds),
      {ctx.sysroot, paths, ctx.env, &control, &clock, emit, ctx.now_iso8601, on_sample},
      watch::Sampler(ctx.sysroot, std::move(*meminfo), std::move(gpu.process_bytes),
                     std::move(gpu.readings)));
  const auto end = supervisor.run(*first);
  return end ? *end : report_failure(ctx, end.error(), true);
}

}  // namespace

Runner setup_watch(CLI::App& app) {
  auto o = std::make_shared<WatchOptions>();
  CLI::App* sub = app.add_subcommand(
      "watch",
      "Guard the llama-server that gb10tune launch started: sample MemAvailable (and the "
      "server's RSS and GPU figure) every second, warn below --warn, and below --floor stop the "
      "server (SIGTERM, then SIGKILL) before the machine swaps to a crawl; optionally restart "
      "it from the same launch record.");
  sub->add_option("--interval", o->interval_s, "Seconds between samples (default 1)")
      ->check(finite_range(0.01, 3600.0))
      ->option_text("SECONDS");
  sub->add_option("--warn", o->warn,
                  "Warn when MemAvailable falls below this (default: the plan's reserve, 12GB)")
      ->option_text("SIZE");
  sub->add_option("--floor", o->floor,
                  "Stop the server when MemAvailable falls below this (default: half of --warn)")
      ->option_text("SIZE");
  sub->add_option("--hysteresis", o->hysteresis,
                  "A warning clears only at --warn plus this (default 1GiB; 0 for none)")
      ->option_text("SIZE");
  sub->add_option("--grace", o->grace_s, "Seconds from SIGTERM to SIGKILL (default 10)")
      ->check(finite_range(0.0, 600.0))
      ->option_text("SECONDS");
  sub->add_flag("--restart", o->restart,
                "Start the server again from the same launch record after a stop or a crash, "
                "once memory allows, with exponential back-off");
  sub->add_option("--restart-delay", o->restart_delay_s,
                  "Back-off before the first restart, doubled for each further one (default 5)")
      ->check(finite_range(0.0, 86400.0))
      ->option_text("SECONDS");
  sub->add_option("--restart-max-delay", o->restart_max_delay_s, "The back-off's cap (default 300)")
      ->check(finite_range(0.0, 86400.0))
      ->option_text("SECONDS");
  sub->add_option("--max-restarts", o->max_restarts,
                  "Restarts in a row before giving up (default 5; 0 for no limit)")
      ->check(integer_range(0, 1000000))
      ->option_text("N");
  sub->add_flag("--wait", o->wait,
                "When no server runs (or it was stopped with gb10tune stop), wait for the next "
                "gb10tune launch instead of ending");
  sub->add_flag("--json", o->json, "One JSON object per event and line (JSON Lines)");
  sub->add_option("--max-samples", o->max_samples, "End after this many samples (default: never)")
      ->option_text("N");
  CLI::Option* once = sub->add_flag(
      "--once", o->once,
      "One sample, then end: a check for scripts that reports and never acts (exit 1 below "
      "--floor, the server left running) unless --act");
  sub->add_flag("--act", o->act,
                "With --once: below --floor stop the server, as a running watch does")
      ->needs(once);
  sub->add_option("--print", o->print,
                  "Print (or with --unit-dir write) systemd user units: the watch beside the "
                  "server, and a timer running gb10tune verify; start nothing")
      ->check(CLI::IsMember({"systemd"}))
      ->option_text("systemd");
  sub->add_option("--verify-every", o->verify_every_min,
                  "With --print systemd: minutes between verify runs (default 15)")
      ->check(integer_range(1, 10080))
      ->option_text("MINUTES");
  sub->add_option("--unit-dir", o->unit_dir,
                  "With --print systemd: write the unit files into DIR (e.g. "
                  "~/.config/systemd/user)")
      ->option_text("DIR");
  sub->add_option("--metrics", o->outputs.metrics,
                  "Serve the watch's figures to Prometheus at http://ADDR:PORT/metrics "
                  "(MemAvailable, swap, the server's RSS and GPU memory, each GPU's temperature, "
                  "power and memory where NVML gives them, the thresholds, the plan, warnings, "
                  "stops and restarts); PORT alone binds 127.0.0.1")
      ->option_text("[ADDR:]PORT");
  sub->add_option("--notify", o->outputs.notify,
                  "POST a JSON event to this http(s):// URL at every edge: the start (a "
                  "heartbeat), a warning and its clearing, a stop, a restart, giving up; from a "
                  "thread of its own with 3 tries, so a receiver that hangs never delays a sample")
      ->option_text("URL");
  sub->add_option("--notify-format", o->outputs.notify_format,
                  "The body --notify posts: generic (the event's JSON), slack ({\"text\": …}) or "
                  "discord ({\"content\": …}) [default generic]")
      ->check(CLI::IsMember({"generic", "slack", "discord"}))
      ->option_text("generic|slack|discord");
  sub->add_option("--replay-meminfo", o->replay_meminfo,
                  "Read MemAvailable from the files of DIR in name order, one per sample")
      ->group("");  // hidden: tests
  sub->footer(exit_code_footer(
      {{ExitCode::ok,
        "the samples asked for were taken with the server running, or it was stopped with "
        "gb10tune stop"},
       {ExitCode::failed,
        "nothing to watch, the server was stopped by the floor or exited (without --restart), "
        "--once found MemAvailable below --floor, or restarts were given up"},
       {ExitCode::usage},
       {ExitCode::server_failed, "restarts were given up after a failed start"},
       {ExitCode::interrupted, "interrupted (SIGINT), the server runs on"},
       {ExitCode::terminated, "terminated (SIGTERM), the server runs on"}}));
  return [o, sub](Context& ctx) { return run_watch(*o, *sub, ctx); };
}

}  // namespace gb10tune::cli
