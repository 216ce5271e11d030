#include "watch_command.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <set>
#include <thread>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/platform/log_file.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"
#include "gb10tune/watch/watch_events.hpp"
#include "gb10tune/watch/watch_sampler.hpp"
#include "gb10tune/watch/watch_units.hpp"
#include "number_option.hpp"
#include "size_option.hpp"

namespace gb10tune::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using watch::Event;
using watch::EventKind;

constexpr std::uint64_t kDefaultHysteresisBytes = 1ull << 30;
// How long a vanished server's pid file is given to disappear before the exit counts as a
// crash: `gb10tune stop` removes it right after the process ends.
constexpr std::chrono::milliseconds kStopSettle{300};

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
  std::string print;
  int verify_every_min = 15;
  std::string unit_dir;
  std::string replay_meminfo;  // hidden: a folder of meminfo files, one per sample
};

// The thresholds of this watch: the options, else the plan's reserve (warn) and half of it
// (floor). A usage Error for a bad size or a floor at or above the warning.
Expected<watch::Thresholds> watch_thresholds(const WatchOptions& o,
                                             const launch::LaunchRecord* record) {
  std::uint64_t reserve = plan::kDefaultReserveBytes;
  if (record != nullptr && record->plan.is_object() && record->plan.contains("settings")) {
    const nlohmann::json& settings = record->plan["settings"];
    if (settings.is_object() && settings.contains("reserve") && settings["reserve"].is_object() &&
        settings["reserve"].contains("value") && settings["reserve"]["value"].is_string()) {
      reserve = parse_size(settings["reserve"]["value"].get<std::string>()).value_or(reserve);
    }
  }
  const auto warn = size_option("--warn", o.warn, reserve);
  if (!warn) {
    return warn.error();
  }
  const auto floor = size_option("--floor", o.floor, *warn / 2);
  if (!floor) {
    return floor.error();
  }
  const auto hysteresis = o.hysteresis == "0"
                              ? Expected<std::uint64_t>(0)
                              : size_option("--hysteresis", o.hysteresis, kDefaultHysteresisBytes);
  if (!hysteresis) {
    return hysteresis.error();
  }
  if (*floor >= *warn) {
    return Error{fmt::format("--floor {} is not below --warn {}: the server would be stopped "
                             "without a warning first; lower --floor or raise --warn",
                             format_bytes(*floor), format_bytes(*warn)),
                 ExitCode::usage};
  }
  return watch::Thresholds{*warn, *floor, *hysteresis};
}

// The server being watched, and what restarting it needs.
struct Watched {
  watch::WatchedProcess process;
  launch::LaunchRecord record;
  platform::Environment env;  // the environment it runs with (its /proc/<pid>/environ)
};

// A restart running on its own thread, so that sampling (and the floor) go on while the
// server loads.
struct RestartJob {
  std::thread thread;
  std::atomic<bool> abort{false};
  std::atomic<bool> done{false};
  std::optional<Expected<launch::StartResult>> result;
  std::optional<launch::LaunchLock> lock;
  launch::LaunchRecord record;
  platform::Environment env;
};

class Watcher {
 public:
  Watcher(const WatchOptions& o, Context& ctx, launch::StatePaths paths)
      : m_o(o), m_ctx(ctx), m_paths(std::move(paths)) {}
  ~Watcher() { finish_job(true); }
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  ExitCode run();

 private:
  double now_s() const { return std::chrono::duration<double>(Clock::now() - m_started).count(); }
  void emit(Event event);
  Event note(EventKind kind, double t_s, std::string message) const;
  Watched adopt(const launch::RunningServer& server) const;
  void start_watching(const launch::RunningServer& server, double t_s, const std::string& why);
  std::string reap(int pid);
  // Each returns an exit code when the watch ends.
  std::optional<ExitCode> step(double t_s);
  std::optional<ExitCode> server_vanished(double t_s, watch::Sample& sample);
  std::optional<ExitCode> handle(const Event& event, double t_s);
  std::optional<ExitCode> handle_all(const std::vector<Event>& events, double t_s);
  std::optional<ExitCode> stop(const Event& floor, double t_s);
  std::optional<ExitCode> start_restart(const Event& event, double t_s);
  std::optional<ExitCode> collect_restart(double t_s);
  std::optional<ExitCode> server_down(double t_s, ExitCode code);
  void finish_job(bool abort);

  const WatchOptions& m_o;
  Context& m_ctx;
  launch::StatePaths m_paths;
  Clock::time_point m_started = Clock::now();
  std::optional<watch::Sampler> m_sampler;
  std::optional<watch::WatchPolicy> m_policy;
  watch::Thresholds m_thresholds;
  std::optional<Watched> m_server;        // the server watched now
  std::optional<Watched> m_restart_from;  // the last server, to start again
  std::unique_ptr<RestartJob> m_job;
  std::set<int> m_children;  // servers this watch started (it must reap them)
  bool m_last_start_failed = false;
};

void Watcher::emit(Event event) {
  if (event.pid == 0 && m_server) {
    event.pid = m_server->process.pid;
  }
  const std::string at = m_ctx.now_iso8601 ? m_ctx.now_iso8601() : "";
  *m_ctx.out << (m_o.json ? watch::render_event_json_line(event, at)
                          : watch::render_event_text(event, at));
  m_ctx.out->flush();
}

Event Watcher::note(EventKind kind, double t_s, std::string message) const {
  Event event;
  event.kind = kind;
  event.t_s = t_s;
  event.message = std::move(message);
  return event;
}

Watched Watcher::adopt(const launch::RunningServer& server) const {
  Watched watched;
  watched.process = {server.pid, server.record.start_time_ticks};
  watched.record = server.record;
  if (auto env = sys::read_process_environ(m_ctx.sysroot, server.pid)) {
    watched.env = std::move(env).value();
  } else {
    watched.env = m_ctx.env;  // another user's server, say: the caller's, cleaned below
  }
  watched.env.unset("GGML_CUDA_ENABLE_UNIFIED_MEMORY");  // K2, whatever happened since
  for (const std::string& name : server.record.env_removed) {
    watched.env.unset(name);
  }
  return watched;
}

void Watcher::start_watching(const launch::RunningServer& server, double t_s,
                             const std::string& why) {
  m_server = adopt(server);
  m_policy->adopted(t_s, server.record.expected_load_bytes);
  Event event =
      note(EventKind::watching, t_s,
           fmt::format("{}llama-server pid {} at {}", why, server.pid, server.record.url));
  emit(event);
}

// Reaps a server this watch started; its exit in words ("" when not ours or still running).
std::string Watcher::reap(int pid) {
  if (m_children.count(pid) == 0) {
    return "";
  }
  const auto exit = platform::reap_exited(pid);
  if (!exit) {
    return "";
  }
  m_children.erase(pid);
  if (exit->signal != 0) {
    return fmt::format("killed by signal {}{}", exit->signal,
                       exit->signal == SIGKILL ? " (the kernel's OOM killer sends SIGKILL)" : "");
  }
  return fmt::format("exit status {}", exit->exit_status);
}

void Watcher::finish_job(bool abort) {
  if (!m_job) {
    return;
  }
  if (abort) {
    m_job->abort = true;
  }
  if (m_job->thread.joinable()) {
    m_job->thread.join();
  }
}

std::optional<ExitCode> Watcher::server_down(double t_s, ExitCode code) {
  m_server.reset();
  if (!m_policy->finished()) {
    return std::nullopt;  // a restart will come
  }
  if (m_o.wait) {
    m_policy->idle();
    emit(note(EventKind::watching, t_s, "no llama-server runs; waiting for `gb10tune launch`"));
    return std::nullopt;
  }
  return code;
}

std::optional<ExitCode> Watcher::stop(const Event& floor, double t_s) {
  const Watched server = *m_server;
  // Why, in the server's own log first: the log is where a user looks for a vanished server.
  platform::append_line(
      server.record.log_path.empty() ? m_paths.log : fs::path(server.record.log_path),
      fmt::format("==== {} watch: MemAvailable {} fell below the floor {}: stopping pid {}",
                  kToolName, format_bytes(floor.available_bytes),
                  format_bytes(floor.threshold_bytes), server.process.pid));
  const auto grace = std::chrono::milliseconds(static_cast<long>(m_o.grace_s * 1000.0));
  const auto stopped = launch::stop_server(m_ctx.sysroot, m_paths, grace, "watch");
  const double after = now_s();
  if (!stopped) {
    emit(note(EventKind::stop_failed, after,
              fmt::format("could not stop llama-server pid {}: {}", server.process.pid,
                          stopped.error().message)));
    return handle_all(m_policy->stop_done(after, false), after);
  }
  reap(server.process.pid);
  emit(note(EventKind::stopped, after,
            fmt::format("llama-server pid {} {} after {:.1f} s", server.process.pid,
                        stopped->killed ? "did not end on SIGTERM and was killed with SIGKILL"
                                        : "ended on SIGTERM",
                        static_cast<double>(stopped->took.count()) / 1000.0)));
  m_restart_from = server;
  m_server.reset();
  if (auto end = handle_all(m_policy->stop_done(after, true), after)) {
    return end;
  }
  if (m_policy->finished() && !m_o.wait && !m_o.restart) {
    emit(note(EventKind::ended, after,
              "the server was stopped to keep the machine responsive; start it again with "
              "`gb10tune launch` once memory is free, or watch with --restart"));
  }
  (void)t_s;
  return server_down(after, ExitCode::failed);
}

std::optional<ExitCode> Watcher::start_restart(const Event& event, double t_s) {
  emit(event);
  const auto failed = [&](const std::string& why) {
    m_last_start_failed = true;
    emit(note(EventKind::restart_failed, t_s, why));
    return handle_all(m_policy->restart_done(t_s, false), t_s);
  };
  if (!m_restart_from) {
    return failed("there is no launch record to restart from");
  }
  auto lock = launch::LaunchLock::acquire(m_paths);
  if (!lock) {
    return failed(lock.error().message);
  }
  const launch::PidFileStatus status = launch::check_pid_file(m_ctx.sysroot, m_paths);
  if (status.state == launch::PidFileState::running) {
    // Someone launched a server meanwhile: watch that one instead.
    m_policy->restart_done(t_s, true);
    start_watching(*status.server, t_s, "a new launch took the restart's place: ");
    return std::nullopt;
  }
  if (status.state == launch::PidFileState::stale) {
    launch::clear_launch_state(m_paths);
  }
  const auto url = http::parse_url(m_restart_from->record.url);
  if (!url) {
    return failed(fmt::format("the launch record's url: {}", url.error().message));
  }
  m_job = std::make_unique<RestartJob>();
  m_job->lock.emplace(std::move(*lock));
  m_job->record = m_restart_from->record;
  m_job->record.launched_at = m_ctx.now_iso8601 ? m_ctx.now_iso8601() : "";
  m_job->env = m_restart_from->env;
  launch::StartRequest request;
  request.argv = m_job->record.argv;
  request.env = m_job->env;
  request.paths = m_paths;
  request.url = *url;
  request.record = m_job->record;
  RestartJob* job = m_job.get();
  job->thread = std::thread([job, request = std::move(request)] {
    job->result = launch::start_server(request, {}, job->abort);
    job->done = true;
  });
  return std::nullopt;
}

std::optional<ExitCode> Watcher::collect_restart(double t_s) {
  if (!m_job || !m_job->done) {
    return std::nullopt;
  }
  m_job->thread.join();
  std::unique_ptr<RestartJob> job = std::move(m_job);
  const auto& result = *job->result;
  if (!result) {
    m_last_start_failed = true;
    const std::string& message = result.error().message;
    const std::string first = message.substr(0, message.find('\n'));
    emit(note(EventKind::restart_failed, t_s,
              fmt::format("llama-server did not start again: {}", first)));
    if (auto end = handle_all(m_policy->restart_done(t_s, false), t_s)) {
      return end;
    }
    return m_policy->finished() ? server_down(t_s, ExitCode::server_failed) : std::nullopt;
  }
  m_last_start_failed = false;
  m_children.insert(result->pid);
  Watched watched;
  watched.process = {result->pid, result->start_time_ticks};
  watched.record = job->record;
  watched.record.pid = result->pid;
  watched.record.start_time_ticks = result->start_time_ticks;
  watched.env = job->env;
  m_server = std::move(watched);
  m_policy->restart_done(t_s, true);
  emit(note(
      EventKind::restarted, t_s,
      fmt::format("llama-server runs again as pid {} at {} (ready after {:.1f} s)", result->pid,
                  m_server->record.url, static_cast<double>(result->to_ready.count()) / 1000.0)));
  return std::nullopt;
}

std::optional<ExitCode> Watcher::handle(const Event& event, double t_s) {
  switch (event.kind) {
    case EventKind::floor:
      if (m_job) {
        Event aborting = event;
        aborting.message = "aborting the restart in progress";
        emit(aborting);
        m_job->abort = true;
        return std::nullopt;
      }
      emit(event);
      if (!m_server) {
        return handle_all(m_policy->stop_done(t_s, false), t_s);  // nothing known to stop
      }
      return stop(event, t_s);
    case EventKind::exited: {
      Event exited = event;
      exited.pid = m_server ? m_server->process.pid : 0;
      const std::string how = m_server ? reap(m_server->process.pid) : "";
      exited.message =
          how.empty() ? "its pid file remains, so it was not `gb10tune stop`: a crash or a kill"
                      : how;
      emit(exited);
      m_restart_from = m_server;
      if (m_o.restart) {
        m_server.reset();
        return std::nullopt;  // a restart comes, or `gave_up` follows in this batch
      }
      return server_down(t_s, ExitCode::failed);
    }
    case EventKind::restart:
      return start_restart(event, t_s);
    case EventKind::gave_up:
      emit(event);
      return server_down(t_s, m_last_start_failed ? ExitCode::server_failed : ExitCode::failed);
    default:
      emit(event);
      return std::nullopt;
  }
}

std::optional<ExitCode> Watcher::handle_all(const std::vector<Event>& events, double t_s) {
  for (const Event& event : events) {
    if (auto end = handle(event, t_s)) {
      return end;
    }
  }
  return std::nullopt;
}

// The watched process is gone: stopped by `gb10tune stop` (no pid file), replaced by a new
// launch (the pid file names another running server), or crashed (its pid file remains).
std::optional<ExitCode> Watcher::server_vanished(double t_s, watch::Sample& sample) {
  auto status = launch::check_pid_file(m_ctx.sysroot, m_paths);
  if (status.state == launch::PidFileState::stale && status.pid == m_server->process.pid) {
    std::this_thread::sleep_for(kStopSettle);  // a stop in progress removes it at once
    status = launch::check_pid_file(m_ctx.sysroot, m_paths);
  }
  if (status.state == launch::PidFileState::running && status.pid != m_server->process.pid) {
    reap(m_server->process.pid);
    start_watching(*status.server, t_s,
                   fmt::format("pid {} was replaced by a new launch: ", m_server->process.pid));
    sample.server_running = true;
    return std::nullopt;
  }
  if (status.state == launch::PidFileState::none) {
    const int pid = m_server->process.pid;
    reap(pid);
    m_server.reset();
    const std::string what = fmt::format(
        "llama-server pid {} was stopped outside the watch (its pid file is gone, "
        "as `gb10tune stop` leaves it)",
        pid);
    if (m_o.wait) {
      m_policy->idle();
      emit(note(EventKind::watching, t_s, what + "; waiting for the next `gb10tune launch`"));
      return std::nullopt;
    }
    emit(note(EventKind::ended, t_s, what + ": nothing left to watch"));
    return ExitCode::ok;
  }
  return std::nullopt;  // a crash: the policy says `exited`
}

std::optional<ExitCode> Watcher::step(double t_s) {
  if (auto end = collect_restart(t_s)) {
    return end;
  }
  if (!m_server && !m_job) {
    // Nothing watched (waiting, or down before a restart): a new launch is watched at once.
    const launch::PidFileStatus status = launch::check_pid_file(m_ctx.sysroot, m_paths);
    if (status.state == launch::PidFileState::running) {
      start_watching(*status.server, t_s, "");
    }
  }
  auto sample = m_sampler->take(t_s, m_server ? m_server->process : watch::WatchedProcess{});
  if (!sample) {
    return report_failure(
        m_ctx, Error{"MemAvailable cannot be read: " + sample.error().message, ExitCode::failed},
        true);
  }
  if (m_server && !sample->server_running) {
    if (auto end = server_vanished(t_s, *sample)) {
      return end;
    }
  }
  return handle_all(m_policy->observe(*sample), t_s);
}

ExitCode Watcher::run() {
  const launch::PidFileStatus status = launch::check_pid_file(m_ctx.sysroot, m_paths);
  if (status.state != launch::PidFileState::running && !m_o.wait) {
    const std::string why = status.state == launch::PidFileState::stale
                                ? " (the pid file is stale: " + status.why + ")"
                                : "";
    return report_failure(m_ctx,
                          Error{fmt::format("no llama-server started by gb10tune is running{}; "
                                            "start one with `gb10tune launch`, or pass --wait to "
                                            "wait for one",
                                            why),
                                ExitCode::failed},
                          true);
  }
  const launch::LaunchRecord* record = status.server ? &status.server->record : nullptr;
  const auto thresholds = watch_thresholds(m_o, record);
  if (!thresholds) {
    return report_failure(m_ctx, thresholds.error(), true);
  }
  m_thresholds = *thresholds;
  watch::RestartPolicy restart;
  restart.enabled = m_o.restart;
  restart.first_delay_s = m_o.restart_delay_s;
  restart.max_delay_s = std::max(m_o.restart_max_delay_s, m_o.restart_delay_s);
  restart.max_attempts = m_o.max_restarts;
  m_policy.emplace(m_thresholds, restart);

  watch::MemInfoSource meminfo = watch::meminfo_from(m_ctx.sysroot);
  if (!m_o.replay_meminfo.empty()) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(m_o.replay_meminfo, ec)) {
      files.push_back(entry.path());
    }
    if (ec || files.empty()) {
      return report_failure(
          m_ctx,
          Error{"--replay-meminfo " + m_o.replay_meminfo + " holds no files", ExitCode::usage},
          true);
    }
    std::sort(files.begin(), files.end());
    meminfo = watch::meminfo_sequence(std::move(files));
  }
  watch::GpuBytesSource gpu;
  if (m_ctx.gpu != nullptr && sys::nvidia_gpu_count(m_ctx.sysroot) > 0) {
    gpu::GpuBackend* backend = m_ctx.gpu;
    gpu = [backend](int pid) {
      return backend->process_gpu_bytes(static_cast<std::uint32_t>(pid));
    };
  }
  m_sampler.emplace(m_ctx.sysroot, std::move(meminfo), std::move(gpu));

  const std::string limits = fmt::format(
      "warn below {}, stop below {} (SIGKILL {:.0f} s after SIGTERM), every {:g} s{}",
      format_bytes(m_thresholds.warn_bytes), format_bytes(m_thresholds.floor_bytes), m_o.grace_s,
      m_o.interval_s,
      m_o.restart ? fmt::format("; restarts after {:g} s, doubling up to {:g} s, {} at most",
                                restart.first_delay_s, restart.max_delay_s,
                                restart.max_attempts == 0 ? std::string("no limit")
                                                          : std::to_string(restart.max_attempts))
                  : "");
  if (status.server) {
    m_server = adopt(*status.server);
    m_policy->adopted(0, status.server->record.expected_load_bytes);
    Event event = note(EventKind::watching, 0,
                       fmt::format("llama-server pid {} at {}: {}", status.server->pid,
                                   status.server->record.url, limits));
    // The figures as they are now (the first sample is taken again below: a replay is not
    // advanced by this one).
    if (const auto now = watch::meminfo_from(m_ctx.sysroot)()) {
      event.available_bytes = now->available_bytes;
      event.sampled = true;
      event.message += fmt::format("; MemAvailable {} now", format_bytes(now->available_bytes));
    }
    emit(event);
  } else {
    m_policy->idle();
    emit(note(EventKind::watching, 0,
              fmt::format("no llama-server runs; waiting for `gb10tune launch`: {}", limits)));
  }

  platform::InterruptGuard guard;
  const std::uint64_t max_samples = m_o.once ? 1 : m_o.max_samples;
  const auto interval = std::chrono::duration<double>(m_o.interval_s);
  for (std::uint64_t n = 0; max_samples == 0 || n < max_samples; ++n) {
    const auto tick = m_started + std::chrono::duration_cast<Clock::duration>(interval * n);
    while (Clock::now() < tick && !guard.flag()) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(tick - Clock::now(), std::chrono::milliseconds(100)));
    }
    if (guard.flag()) {
      finish_job(true);
      emit(note(EventKind::ended, now_s(), "interrupted (SIGINT or SIGTERM); the server runs on"));
      return ExitCode::interrupted;
    }
    if (auto end = step(now_s())) {
      finish_job(true);
      return *end;
    }
  }
  // The last sample: a restart in progress is waited for, so that its outcome is reported.
  if (m_job) {
    finish_job(false);
    if (auto end = collect_restart(now_s())) {
      return *end;
    }
  }
  return m_server ? ExitCode::ok : ExitCode::failed;
}

// The watch command of the units: this binary, `watch --wait`, and the options given.
std::vector<std::string> unit_watch_argv(const std::string& self, const CLI::App& sub) {
  std::vector<std::string> argv = {self, "watch", "--wait"};
  for (const char* name : {"--interval", "--warn", "--floor", "--hysteresis", "--grace",
                           "--restart-delay", "--restart-max-delay", "--max-restarts"}) {
    const CLI::Option* option = sub.get_option_no_throw(name);
    if (option != nullptr && option->count() > 0) {
      argv.push_back(name);
      argv.push_back(option->results().back());
    }
  }
  for (const char* name : {"--restart", "--json"}) {
    const CLI::Option* option = sub.get_option_no_throw(name);
    if (option != nullptr && option->count() > 0) {
      argv.push_back(name);
    }
  }
  return argv;
}

ExitCode print_units(const WatchOptions& o, const CLI::App& sub, Context& ctx) {
  const auto self = sys::read_process_exe(platform::Sysroot(), platform::current_pid());
  watch::WatchUnitsInput input;
  const std::string binary = self ? self->path : std::string("gb10tune");
  input.watch_argv = unit_watch_argv(binary, sub);
  input.verify_argv = {binary, "verify"};
  input.verify_every_min = o.verify_every_min;
  for (const char* name : {"XDG_STATE_HOME", "XDG_CONFIG_HOME"}) {
    if (const auto value = ctx.env.get(name)) {
      input.environment.emplace_back(name, *value);
    }
  }
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
  std::error_code ec;
  fs::create_directories(o.unit_dir, ec);
  if (ec) {
    return report_failure(
        ctx,
        Error{fmt::format("cannot create --unit-dir {}: {}", o.unit_dir, ec.message()),
              ExitCode::usage},
        true);
  }
  for (const watch::UnitFile& file : files) {
    const fs::path path = fs::path(o.unit_dir) / file.name;
    if (const Status written = platform::write_file_atomic(path, file.content); !written) {
      return report_failure(ctx, Error{written.error().message, ExitCode::usage}, true);
    }
    fs::permissions(path,
                    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                        fs::perms::others_read,
                    ec);
    *ctx.out << "wrote " << path.string() << "\n";
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
  Watcher watcher(o, ctx, launch::StatePaths::under(*dir));
  return watcher.run();
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
      ->check(CLI::Range(0, 1000000));
  sub->add_flag("--wait", o->wait,
                "When no server runs (or it was stopped with gb10tune stop), wait for the next "
                "gb10tune launch instead of ending");
  sub->add_flag("--json", o->json, "One JSON object per event and line (JSON Lines)");
  sub->add_option("--max-samples", o->max_samples, "End after this many samples (default: never)")
      ->option_text("N");
  sub->add_flag("--once", o->once, "One sample, then end (the same as --max-samples 1)");
  sub->add_option("--print", o->print,
                  "Print (or with --unit-dir write) systemd user units: the watch beside the "
                  "server, and a timer running gb10tune verify; start nothing")
      ->check(CLI::IsMember({"systemd"}))
      ->option_text("systemd");
  sub->add_option("--verify-every", o->verify_every_min,
                  "With --print systemd: minutes between verify runs (default 15)")
      ->check(CLI::Range(1, 10080))
      ->option_text("MINUTES");
  sub->add_option("--unit-dir", o->unit_dir,
                  "With --print systemd: write the unit files into DIR (e.g. "
                  "~/.config/systemd/user)")
      ->option_text("DIR");
  sub->add_option("--replay-meminfo", o->replay_meminfo,
                  "Read MemAvailable from the files of DIR in name order, one per sample")
      ->group("");  // hidden: tests
  sub->footer(exit_code_footer(
      {{ExitCode::ok,
        "the samples asked for were taken with the server running, or it was stopped with "
        "gb10tune stop"},
       {ExitCode::failed,
        "nothing to watch, the server was stopped by the floor or exited (without --restart), or "
        "restarts were given up"},
       {ExitCode::usage},
       {ExitCode::server_failed, "restarts were given up after a failed start"},
       {ExitCode::interrupted, "interrupted (SIGINT), the server runs on"},
       {ExitCode::terminated, "terminated (SIGTERM), the server runs on"}}));
  return [o, sub](Context& ctx) { return run_watch(*o, *sub, ctx); };
}

}  // namespace gb10tune::cli
