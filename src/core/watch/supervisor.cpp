#include "gb10tune/watch/supervisor.hpp"

#include <fmt/format.h>

#include <csignal>
#include <filesystem>

#include "gb10tune/http/http_client.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::watch {

namespace {

// How long a vanished server's pid file is given to disappear before the exit counts as a
// crash: `gb10tune stop` removes it right after the process ends.
constexpr double kStopSettleS = 0.3;

// An event that only the supervisor knows of (no sample behind it).
Event supervisor_note(EventKind kind, double t_s, std::string message) {
  Event event;
  event.kind = kind;
  event.t_s = t_s;
  event.message = std::move(message);
  return event;
}

// How a server this watch started ended, in words.
std::string exit_in_words(const platform::ChildExit& exit) {
  if (exit.signal != 0) {
    return fmt::format("killed by signal {}{}", exit.signal,
                       exit.signal == SIGKILL ? " (the kernel's OOM killer sends SIGKILL)" : "");
  }
  return fmt::format("exit status {}", exit.exit_status);
}

}  // namespace

// A restart under way: the launch lock is held until the start has its outcome (members are
// destroyed last to first: the start ends before the lock goes).
struct Supervisor::Restart {
  launch::LaunchLock lock;
  launch::LaunchRecord record;
  platform::Environment env;
  std::unique_ptr<PendingStart> start;
};

Supervisor::Supervisor(SupervisorOptions options, SupervisorWorld world, Sampler sampler)
    : m_options(std::move(options)),
      m_world(std::move(world)),
      m_sampler(std::move(sampler)),
      m_policy(m_options.thresholds, m_options.restart) {}

Supervisor::~Supervisor() {
  finish_restart(true);
}

void Supervisor::emit(Event event) {
  if (event.pid == 0 && m_server) {
    event.pid = m_server->process.pid;
  }
  m_world.emit(event);
}

WatchedServer Supervisor::adopt(const launch::RunningServer& server) const {
  WatchedServer watched;
  watched.process = {server.pid, server.record.start_time_ticks};
  watched.record = server.record;
  if (auto env = sys::read_process_environ(m_world.sysroot, server.pid)) {
    watched.env = std::move(env).value();
  } else {
    watched.env = m_world.caller_env;  // another user's server, say: the caller's, cleaned below
  }
  watched.env.unset("GGML_CUDA_ENABLE_UNIFIED_MEMORY");  // K2, whatever happened since
  for (const std::string& name : server.record.env_removed) {
    watched.env.unset(name);
  }
  return watched;
}

void Supervisor::start_watching(const launch::RunningServer& server, double t_s,
                                const std::string& why) {
  m_server = adopt(server);
  m_policy.adopted(t_s, server.record.expected_load_bytes);
  emit(supervisor_note(
      EventKind::watching, t_s,
      fmt::format("{}llama-server pid {} at {}", why, server.pid, server.record.url)));
}

// Reaps a server this watch started; its exit in words ("" when not ours or still running).
std::string Supervisor::reap(int pid) {
  if (m_children.count(pid) == 0) {
    return "";
  }
  const auto exit = m_world.control->reap(pid);
  if (!exit) {
    return "";
  }
  m_children.erase(pid);
  return exit_in_words(*exit);
}

void Supervisor::finish_restart(bool abort) {
  if (!m_restart) {
    return;
  }
  if (abort) {
    m_restart->start->abort();
  }
  m_restart->start->finish();
}

std::optional<ExitCode> Supervisor::server_down(double t_s, ExitCode code) {
  m_server.reset();
  if (!m_policy.finished()) {
    return std::nullopt;  // a restart will come
  }
  if (m_options.wait) {
    m_policy.idle();
    emit(supervisor_note(EventKind::watching, t_s,
                         "no llama-server runs; waiting for `gb10tune launch`"));
    return std::nullopt;
  }
  return code;
}

std::optional<ExitCode> Supervisor::stop(const Event& floor) {
  const WatchedServer server = *m_server;
  // Why, in the server's own log first: the log is where a user looks for a vanished server.
  m_world.control->note_in_log(
      server.record.log_path.empty() ? m_world.paths.log
                                     : std::filesystem::path(server.record.log_path),
      fmt::format("==== {} watch: MemAvailable {} fell below the floor {}: stopping pid {}",
                  kToolName, format_bytes(floor.available_bytes),
                  format_bytes(floor.threshold_bytes), server.process.pid));
  const auto grace = std::chrono::milliseconds(static_cast<long>(m_options.grace_s * 1000.0));
  const auto stopped = m_world.control->stop(grace);
  const double after = m_world.clock->now_s();
  if (!stopped) {
    emit(supervisor_note(EventKind::stop_failed, after,
                         fmt::format("could not stop llama-server pid {}: {}", server.process.pid,
                                     stopped.error().message)));
    return handle_all(m_policy.stop_done(after, false), after);
  }
  reap(server.process.pid);
  emit(supervisor_note(
      EventKind::stopped, after,
      fmt::format("llama-server pid {} {} after {:.1f} s", server.process.pid,
                  stopped->killed ? "did not end on SIGTERM and was killed with SIGKILL"
                                  : "ended on SIGTERM",
                  static_cast<double>(stopped->took.count()) / 1000.0)));
  m_restart_from = server;
  m_server.reset();
  if (auto end = handle_all(m_policy.stop_done(after, true), after)) {
    return end;
  }
  if (m_policy.finished() && !m_options.wait && !m_options.restart.enabled) {
    emit(supervisor_note(
        EventKind::ended, after,
        "the server was stopped to keep the machine responsive; start it again with "
        "`gb10tune launch` once memory is free, or watch with --restart"));
  }
  return server_down(after, ExitCode::failed);
}

std::optional<ExitCode> Supervisor::restart_failed(double t_s, const std::string& why) {
  m_last_start_failed = true;
  emit(supervisor_note(EventKind::restart_failed, t_s, why));
  return handle_all(m_policy.restart_done(t_s, false), t_s);
}

std::optional<ExitCode> Supervisor::start_restart(const Event& event, double t_s) {
  emit(event);
  if (!m_restart_from) {
    return restart_failed(t_s, "there is no launch record to restart from");
  }
  auto lock = m_world.control->lock();
  if (!lock) {
    return restart_failed(t_s, lock.error().message);
  }
  const launch::PidFileStatus status = m_world.control->pid_file();
  if (status.state == launch::PidFileState::running) {
    // Someone launched a server meanwhile: watch that one instead.
    m_policy.restart_done(t_s, true);
    start_watching(*status.server, t_s, "a new launch took the restart's place: ");
    return std::nullopt;
  }
  if (status.state == launch::PidFileState::stale) {
    m_world.control->clear_stale();
  }
  if (m_restart_from->record.foreground) {
    // Its service manager starts it again (the pid file check above then watches that one):
    // a copy started here would compete with it for the port and the memory.
    return restart_failed(
        t_s,
        "llama-server was started by `gb10tune launch --foreground` under a service "
        "manager (systemd, llama-swap), which starts it again itself; watch waits for that "
        "start instead of starting a second copy");
  }
  const auto url = http::parse_url(m_restart_from->record.url);
  if (!url) {
    return restart_failed(t_s, fmt::format("the launch record's url: {}", url.error().message));
  }
  launch::LaunchRecord record = m_restart_from->record;
  record.launched_at = m_world.now_iso8601 ? m_world.now_iso8601() : "";
  launch::StartRequest request;
  request.argv = record.argv;
  request.env = m_restart_from->env;
  request.paths = m_world.paths;
  request.url = *url;
  request.record = record;
  // The server that exited may hold its port a while longer (a CUDA teardown after its main
  // thread ended): the start waits for it rather than taking the port for someone else's.
  request.replaces =
      launch::ReplacedServer{m_restart_from->process.pid, m_restart_from->process.start_time_ticks};
  auto start = m_world.control->start(std::move(request));
  m_restart = std::make_unique<Restart>(std::move(*lock), std::move(record), m_restart_from->env,
                                        std::move(start));
  return std::nullopt;
}

std::optional<ExitCode> Supervisor::collect_restart(double t_s) {
  if (!m_restart || !m_restart->start->done()) {
    return std::nullopt;
  }
  m_restart->start->finish();
  const std::unique_ptr<Restart> job = std::move(m_restart);
  const Expected<launch::StartResult>& result = job->start->result();
  if (!result) {
    const std::string& message = result.error().message;
    const std::string first = message.substr(0, message.find('\n'));
    if (auto end =
            restart_failed(t_s, fmt::format("llama-server did not start again: {}", first))) {
      return end;
    }
    return m_policy.finished() ? server_down(t_s, ExitCode::server_failed) : std::nullopt;
  }
  m_last_start_failed = false;
  m_children.insert(result->pid);
  WatchedServer watched;
  watched.process = {result->pid, result->start_time_ticks};
  watched.record = job->record;
  watched.record.pid = result->pid;
  watched.record.start_time_ticks = result->start_time_ticks;
  watched.env = job->env;
  m_server = std::move(watched);
  m_policy.restart_done(t_s, true);
  emit(supervisor_note(
      EventKind::restarted, t_s,
      fmt::format("llama-server runs again as pid {} at {} (ready after {:.1f} s)", result->pid,
                  m_server->record.url, static_cast<double>(result->to_ready.count()) / 1000.0)));
  return std::nullopt;
}

std::optional<ExitCode> Supervisor::server_exited(const Event& event, double t_s) {
  Event exited = event;
  exited.pid = m_server ? m_server->process.pid : 0;
  const std::string how = m_server ? reap(m_server->process.pid) : "";
  exited.message =
      how.empty() ? "its pid file remains, so it was not `gb10tune stop`: a crash or a kill" : how;
  emit(exited);
  m_restart_from = m_server;
  if (m_options.restart.enabled) {
    m_server.reset();
    return std::nullopt;  // a restart comes, or `gave_up` follows in this batch
  }
  return server_down(t_s, ExitCode::failed);
}

std::optional<ExitCode> Supervisor::handle(const Event& event, double t_s) {
  switch (event.kind) {
    case EventKind::floor:
      if (m_restart) {
        Event aborting = event;
        aborting.message = "aborting the restart in progress";
        emit(aborting);
        m_restart->start->abort();
        return std::nullopt;
      }
      if (!m_options.act) {
        // A check: said and counted, nothing signalled (the server runs on).
        Event reported = event;
        reported.check_only = true;
        emit(reported);
        m_floor_crossed = true;
        return handle_all(m_policy.stop_done(t_s, false), t_s);
      }
      emit(event);
      if (!m_server) {
        return handle_all(m_policy.stop_done(t_s, false), t_s);  // nothing known to stop
      }
      return stop(event);
    case EventKind::exited:
      return server_exited(event, t_s);
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

std::optional<ExitCode> Supervisor::handle_all(const std::vector<Event>& events, double t_s) {
  for (const Event& event : events) {
    if (auto end = handle(event, t_s)) {
      return end;
    }
  }
  return std::nullopt;
}

// The watched process is gone: stopped by `gb10tune stop` (no pid file), replaced by a new
// launch (the pid file names another running server), or crashed (its pid file remains).
std::optional<ExitCode> Supervisor::server_vanished(double t_s, Sample& sample) {
  auto status = m_world.control->pid_file();
  if (status.state == launch::PidFileState::stale && status.pid == m_server->process.pid) {
    m_world.clock->sleep_for(kStopSettleS);  // a stop in progress removes it at once
    status = m_world.control->pid_file();
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
    if (m_options.wait) {
      m_policy.idle();
      emit(supervisor_note(EventKind::watching, t_s,
                           what + "; waiting for the next `gb10tune launch`"));
      return std::nullopt;
    }
    emit(supervisor_note(EventKind::ended, t_s, what + ": nothing left to watch"));
    return ExitCode::ok;
  }
  return std::nullopt;  // a crash: the policy says `exited`
}

std::optional<Expected<ExitCode>> Supervisor::step(double t_s) {
  if (auto end = collect_restart(t_s)) {
    return *end;
  }
  if (!m_server && !m_restart) {
    // Nothing watched (waiting, or down before a restart): a new launch is watched at once.
    const launch::PidFileStatus status = m_world.control->pid_file();
    if (status.state == launch::PidFileState::running) {
      start_watching(*status.server, t_s, "");
    }
  }
  auto sample = m_sampler.take(t_s, m_server ? m_server->process : WatchedProcess{});
  if (!sample) {
    return Expected<ExitCode>(
        Error{"MemAvailable cannot be read: " + sample.error().message, ExitCode::failed});
  }
  if (m_world.on_sample) {
    m_world.on_sample(*sample);
  }
  if (m_server && !sample->server_running) {
    if (auto end = server_vanished(t_s, *sample)) {
      return *end;
    }
  }
  return handle_all(m_policy.observe(*sample), t_s);
}

std::string Supervisor::limits() const {
  const RestartPolicy& restart = m_options.restart;
  return fmt::format(
      "warn below {}, stop below {} (SIGKILL {:.0f} s after SIGTERM), every {:g} s{}",
      format_bytes(m_options.thresholds.warn_bytes), format_bytes(m_options.thresholds.floor_bytes),
      m_options.grace_s, m_options.interval_s,
      restart.enabled
          ? fmt::format("; restarts after {:g} s, doubling up to {:g} s, {} at most",
                        restart.first_delay_s, restart.max_delay_s,
                        restart.max_attempts == 0 ? std::string("no limit")
                                                  : std::to_string(restart.max_attempts))
          : "");
}

void Supervisor::begin(const std::optional<launch::RunningServer>& first) {
  if (!first) {
    m_policy.idle();
    emit(supervisor_note(
        EventKind::watching, 0,
        fmt::format("no llama-server runs; waiting for `gb10tune launch`: {}", limits())));
    return;
  }
  m_server = adopt(*first);
  m_policy.adopted(0, first->record.expected_load_bytes);
  Event event = supervisor_note(
      EventKind::watching, 0,
      fmt::format("llama-server pid {} at {}: {}", first->pid, first->record.url, limits()));
  // The figures as they are now (the first sample is taken again below: a replay is not
  // advanced by this one).
  if (const auto now = meminfo_from(m_world.sysroot)()) {
    event.available_bytes = now->available_bytes;
    event.sampled = true;
    event.message += fmt::format("; MemAvailable {} now", format_bytes(now->available_bytes));
  }
  event.gpus = m_sampler.gpus();
  emit(event);
}

Expected<ExitCode> Supervisor::run(std::optional<launch::RunningServer> first) {
  begin(first);
  for (std::uint64_t n = 0; m_options.max_samples == 0 || n < m_options.max_samples; ++n) {
    if (!m_world.clock->wait_until(m_options.interval_s * static_cast<double>(n))) {
      finish_restart(true);
      emit(supervisor_note(EventKind::ended, m_world.clock->now_s(),
                           "interrupted (SIGINT or SIGTERM); the server runs on"));
      return ExitCode::interrupted;
    }
    if (auto end = step(m_world.clock->now_s())) {
      finish_restart(true);
      return std::move(*end);
    }
  }
  // The last sample: a restart in progress is waited for, so that its outcome is reported.
  if (m_restart) {
    finish_restart(false);
    if (auto end = collect_restart(m_world.clock->now_s())) {
      return *end;
    }
  }
  return m_server && !m_floor_crossed ? ExitCode::ok : ExitCode::failed;
}

}  // namespace gb10tune::watch
