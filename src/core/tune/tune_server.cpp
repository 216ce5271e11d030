// The TuneSeam of a TuneSession: the launch planner for each candidate, launch's start and stop,
// bench's workload over HTTP, and the journal in the state directory.
#include <fmt/format.h>

#include "gb10tune/launch/launch_planner.hpp"
#include "gb10tune/launch/launch_session.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/tune/candidate_memory.hpp"
#include "gb10tune/tune/tune_session.hpp"

namespace gb10tune::tune {

namespace {

constexpr std::chrono::seconds kStopGrace{30};

std::chrono::milliseconds timeout_of(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

}  // namespace

// The last plan that fitted, and the searched settings it was made for.
struct TuneSession::Planned {
  nlohmann::json settings;
  launch::LaunchPlan plan;
};

TuneSession::TuneSession() = default;
TuneSession::~TuneSession() = default;

Expected<launch::LaunchPlan> TuneSession::plan_values(nlohmann::json values,
                                                      std::uint64_t freed) const {
  launch::LaunchRequest request;
  if (const auto extra = values.find("extra_args"); extra != values.end()) {
    request.extra = extra->get<std::vector<std::string>>();
    values.erase(extra);
  }
  request.values = std::move(values);
  request.values["fit"] = "off";  // a fit would lower what tune measures: a refusal instead
  if (!m_request.reserve.empty()) {
    request.values["reserve"] = m_request.reserve;
  }
  request.backend = m_record.backend.empty() ? std::string("auto") : m_record.backend;
  // The candidates run in the original server's environment, cleaned as launch cleans it.
  launch::PlannerContext context{m_original_env, m_env.sysroot, m_env.gpu,
                                 [](launch::NoteKind, const std::string&) {}};
  context.freed_bytes = freed;
  auto draft = launch::draft_launch(std::move(request), context);
  if (!draft) {
    return draft.error();
  }
  return launch::plan_launch(std::move(*draft), context, false);
}

Expected<PlanCheck> TuneSession::plan(const nlohmann::json& settings) {
  // Started before in this tune (the incumbent, re-measured at the end): it ran in this memory
  // already, and is started again as it ran.
  if (const auto started = m_started.find(settings.dump()); started != m_started.end()) {
    m_planned = started->second;
    return PlanCheck{};
  }
  // Only a knob of the memory plan makes a candidate need other memory than the start, whose
  // plan launch checked (and may have fitted to the whole budget): any other candidate is
  // planned only for its command, never refused for memory.
  const std::vector<std::string> changed = memory_knobs_changed(m_options.start, settings);
  std::uint64_t freed = 0;
  if (!changed.empty() && m_running_pid > 0) {
    if (const auto memory = sys::read_process_memory(m_env.sysroot, m_running_pid)) {
      freed = freed_when_stopped(*memory);
    }
  }
  nlohmann::json values = full_settings(settings);
  auto planned = plan_values(values, freed);
  if (!planned) {
    return planned.error();
  }
  std::string label;
  for (const auto& [key, value] : settings.items()) {
    const auto start = m_options.start.find(key);
    if (start == m_options.start.end() || *start != value) {
      label += fmt::format("{}{} {}", label.empty() ? "" : " + ", key,
                           value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  const auto figures_of = [&values, freed](const launch::LaunchPlan& p) {
    CandidatePlanFigures figures;
    std::optional<std::string> refusal = launch::start_refusal(p);
    if (refusal) {
      // launch's way past it (--force) is no option for tune.
      if (const auto force = refusal->rfind(" (--force"); force != std::string::npos) {
        refusal->resize(force);
      }
      figures.refusal = *refusal;
    }
    figures.fits = !refusal;
    figures.need_bytes = p.plan.total_bytes;
    figures.available_bytes = p.plan.available_bytes.value_or(0);
    figures.margin_bytes = p.plan.margin_bytes.value_or(0);
    figures.reserve_bytes = p.sizes.reserve;
    figures.freed_bytes = freed;
    if (values.value("cache_ram_mib", nlohmann::json(0)).get<std::int64_t>() > 0) {
      figures.cache_ram_bytes = p.plan.cache_ram_bytes;
    }
    return figures;
  };
  CandidateMemory memory = judge_candidate_memory(changed, figures_of(*planned), label);
  const CandidateMemory first = memory;
  // MemAvailable moves between two reads on a busy machine: the cache is lowered again by what
  // is still missing, a few times at most.
  constexpr int kLowerings = 4;
  for (int i = 0; i < kLowerings && memory.verdict == MemoryVerdict::lower_cache; ++i) {
    values["cache_ram_mib"] = memory.cache_ram_mib;
    planned = plan_values(values, freed);
    if (!planned) {
      return planned.error();
    }
    memory = judge_candidate_memory(changed, figures_of(*planned), label);
  }
  if (memory.verdict == MemoryVerdict::refused) {
    return PlanCheck{false, memory.text};
  }
  if (memory.verdict == MemoryVerdict::lower_cache) {
    return PlanCheck{
        false, fmt::format("{} does not fit in memory even with --cache-ram {} (MemAvailable "
                           "kept falling while it was planned): {}",
                           label, values["cache_ram_mib"].dump(), figures_of(*planned).refusal)};
  }
  if (first.verdict == MemoryVerdict::lower_cache && m_env.note) {
    const std::int64_t final_mib = values["cache_ram_mib"].get<std::int64_t>();
    m_env.note(launch::NoteKind::info,
               final_mib == first.cache_ram_mib
                   ? first.text
                   : fmt::format("{}; then --cache-ram {}, as MemAvailable moved while it was "
                                 "planned",
                                 first.text, final_mib));
  }
  const std::uint64_t slot = planned->draft.built.command.ctx_per_slot;
  if (const Status fits = bench::check_workload_fits(m_workload, slot); !fits) {
    return PlanCheck{false, fits.error().message};
  }
  m_planned = std::make_shared<Planned>(Planned{settings, std::move(*planned)});
  return PlanCheck{};
}

Status TuneSession::stop_running() {
  const launch::PidFileStatus status = launch::check_pid_file(platform::Sysroot(), m_paths);
  if (status.state == launch::PidFileState::running) {
    auto stopped = launch::stop_server(platform::Sysroot(), m_paths, kStopGrace, "tune");
    if (!stopped) {
      return stopped.error();
    }
  } else if (status.state == launch::PidFileState::stale) {
    launch::clear_launch_state(m_paths);  // it died: nothing to stop
  }
  m_running_pid = 0;
  return {};
}

Status TuneSession::restart(const nlohmann::json& settings, const std::atomic<bool>& stop,
                            const Tick& tick) {
  if (!m_planned || m_planned->settings != settings) {
    auto checked = plan(settings);
    if (!checked) {
      return checked.error();
    }
    if (!checked->fits) {
      return Error{checked->refusal, ExitCode::memory_refused};
    }
  }
  const launch::LaunchPlan& p = m_planned->plan;
  if (const Status stopped = stop_running(); !stopped) {
    return stopped;
  }
  const auto url = http::parse_url(m_record.url);
  if (!url) {
    return Error{url.error().message, ExitCode::failed};
  }
  launch::StartRequest start;
  start.argv = p.draft.built.command.argv;
  start.env = p.draft.built.environment.env;
  start.paths = m_paths;
  start.url = *url;
  start.timeout = std::chrono::seconds(p.draft.settings.integer("timeout_s"));
  start.record = launch::make_launch_record(launch::preview_of(p), m_paths, m_record.url,
                                            m_env.now_iso8601 ? m_env.now_iso8601() : "");
  auto started = launch::start_server(
      start, [&tick](const launch::StartProgress&) { tick(); }, stop);
  if (!started) {
    return started.error();
  }
  m_running_pid = started->pid;
  m_started[settings.dump()] = m_planned;
  return {};
}

Status TuneSession::restore() {
  if (const Status stopped = stop_running(); !stopped) {
    return Error{
        "the server tune started could not be stopped, so the original was not started "
        "again: " +
            stopped.error().message,
        ExitCode::server_failed};
  }
  const auto url = http::parse_url(m_record.url);
  if (!url) {
    return Error{url.error().message, ExitCode::failed};
  }
  launch::StartRequest start;
  start.argv = m_record.argv;
  start.env = m_original_env;
  start.paths = m_paths;
  start.url = *url;
  start.timeout = std::chrono::seconds(m_settings.value("timeout_s", 600));
  start.record = m_record;  // as it was, but for the pid and start time
  const std::atomic<bool> never{false};
  auto started = launch::start_server(start, {}, never);
  if (!started) {
    return Error{"the original server did not start again: " + started.error().message +
                     "; start it with `gb10tune launch` as before",
                 ExitCode::server_failed};
  }
  m_running_pid = started->pid;
  return {};
}

Expected<WorkloadRun> TuneSession::measure(const MeasureAsk& ask, const std::atomic<bool>& stop,
                                           const Tick& tick) {
  bench::Workload workload = m_workload;
  for (bench::WorkloadRequest& request : workload.requests) {
    for (const auto& [field, value] : ask.fields.items()) {
      request.body[field] = value;
    }
  }
  auto endpoint = m_env.connect(m_record.url, timeout_of(m_request.request_timeout_s));
  if (!endpoint) {
    return endpoint.error();
  }
  bench::ServerRunInputs inputs;
  inputs.workload = &workload;
  inputs.options.concurrency = {ask.concurrency};
  inputs.options.samples = ask.samples;
  inputs.options.warmup = ask.warmup;
  inputs.complete = endpoint->complete;
  inputs.clock = m_env.clock;
  inputs.cancel = &stop;
  const double began = m_env.clock();
  double warm = began;
  inputs.progress = [&](int, int, int, bool warmup, const std::vector<bench::RequestSample>&) {
    if (warmup) {
      warm = m_env.clock();
    }
    tick();
  };
  auto levels = bench::run_server_bench(inputs);
  if (!levels) {
    return levels.error();
  }
  WorkloadRun run;
  run.level = std::move(levels->front());
  run.warmup_s = warm - began;
  run.samples_s = m_env.clock() - warm;
  return run;
}

Status TuneSession::append_journal(const nlohmann::json& line) {
  m_journal_text += line.dump() + "\n";
  if (const Status dir = trust::ensure_private_dir(m_journal_path.parent_path()); !dir) {
    return dir;
  }
  return platform::write_file_atomic(m_journal_path, m_journal_text);
}

TuneSeam TuneSession::seam() {
  TuneSeam seam;
  seam.plan = [this](const nlohmann::json& settings) { return plan(settings); };
  seam.restart = [this](const nlohmann::json& settings, const std::atomic<bool>& stop,
                        const Tick& tick) { return restart(settings, stop, tick); };
  seam.restore = [this] { return restore(); };
  seam.measure = [this](const MeasureAsk& ask, const std::atomic<bool>& stop, const Tick& tick) {
    return measure(ask, stop, tick);
  };
  seam.mem_available = [root = m_env.sysroot]() -> std::optional<std::uint64_t> {
    const auto memory = sys::read_meminfo(root);
    return memory ? std::optional<std::uint64_t>(memory->available_bytes) : std::nullopt;
  };
  seam.clock = m_env.clock;
  seam.journal = [this](const nlohmann::json& line) { return append_journal(line); };
  return seam;
}

}  // namespace gb10tune::tune
