#include "gb10tune/tune/tune_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "gb10tune/bench/workload_depth.hpp"
#include "gb10tune/launch/launch_planner.hpp"
#include "gb10tune/launch/server_binary.hpp"
#include "gb10tune/sys/cpuinfo.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/size_option.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/watch/watch_setup.hpp"

namespace gb10tune::tune {

namespace {

namespace fs = std::filesystem;

std::chrono::milliseconds seconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

// Every launch setting the record's plan document holds (settings.KEY.value).
Expected<nlohmann::json> recorded_settings(const launch::LaunchRecord& record,
                                           const fs::path& path) {
  nlohmann::json values = nlohmann::json::object();
  const auto settings = record.plan.find("settings");
  if (settings != record.plan.end() && settings->is_object()) {
    for (const auto& [key, entry] : settings->items()) {
      if (entry.is_object() && entry.contains("value")) {
        values[key] = entry["value"];
      }
    }
  }
  if (values.empty()) {
    return Error{fmt::format("the launch record {} holds no settings (written by an older "
                             "gb10tune?); start the server again with `gb10tune launch`",
                             path.string()),
                 ExitCode::failed};
  }
  return values;
}

// The running server launch started, with its record; an Error telling to launch first.
Expected<launch::RunningServer> launched_server(const launch::StatePaths& paths) {
  const launch::PidFileStatus status = launch::check_pid_file(platform::Sysroot(), paths);
  if (status.state == launch::PidFileState::running) {
    return *status.server;
  }
  const std::string why = status.state == launch::PidFileState::stale
                              ? fmt::format(" (the pid file is stale: {})", status.why)
                              : std::string();
  return Error{fmt::format("no llama-server started by `gb10tune launch` is running{}; tune "
                           "measures that server and restarts it with each candidate, so start "
                           "it first: gb10tune launch --model FILE",
                           why),
               ExitCode::failed};
}

// A name for this machine in a tuned profile: the GB10, the first GPU, or the CPU.
std::string machine_name(const TuneEnvironment& env) {
  if (sys::is_gb10_machine(env.sysroot)) {
    return "NVIDIA GB10";
  }
  if (env.gpu != nullptr) {
    const gpu::GpuReport devices = env.gpu->query_devices();
    if (!devices.devices.empty()) {
      return devices.devices.front().name;
    }
  }
  const auto cpu = sys::read_cpuinfo(env.sysroot);
  return cpu ? "CPU: " + cpu->model : std::string("unknown machine");
}

// FNV-1a of the workload's request bodies: two journals of the same requests agree.
std::string workload_digest(const bench::Workload& workload) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const bench::WorkloadRequest& request : workload.requests) {
    for (const char c : request.body.dump()) {
      hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    }
  }
  return fmt::format("{:016x}", hash);
}

// What decides the knobs: the goal, the build's request fields, the model and where it runs.
KnobContext knob_context(const TuneRequest& request, const launch::LaunchRecord& record,
                         const nlohmann::json& settings, const bench::ServerInfo& info,
                         const platform::Sysroot& root) {
  KnobContext context;
  context.goal = request.goal;
  context.concurrency = request.concurrency;
  context.allow_lossy = request.allow_lossy;
  context.speculative = record.mtp;
  const auto& layers = settings.value("gpu_layers", nlohmann::json("all"));
  const bool partial = layers.is_number_integer() &&
                       layers.get<std::int64_t>() < static_cast<std::int64_t>(record.model_layers);
  context.work_on_cpu = record.backend == "cpu" || partial;
  if (const auto cpu = sys::read_cpuinfo(root)) {
    context.cpu_cores = cpu->logical_cpus;
  }
  context.props = info.props;
  context.current = settings;
  return context;
}

}  // namespace

Status TuneSession::read_journal_for(bool resume) {
  m_journal_path = m_paths.record.parent_path() / "tune-journal.jsonl";
  auto text = trust::read_private_file(m_journal_path);
  if (!text) {
    return text.error();
  }
  if (!resume) {
    if (*text) {
      m_notes.push_back(
          fmt::format("{} (an earlier tune) is replaced; --resume would have "
                      "continued it",
                      m_journal_path.string()));
    }
    return {};
  }
  if (!*text) {
    return Error{fmt::format("--resume: there is no journal at {}; run gb10tune tune without "
                             "--resume to start one",
                             m_journal_path.string()),
                 ExitCode::usage};
  }
  auto journal = parse_journal(**text, m_journal_path.string());
  if (!journal) {
    return journal.error();
  }
  m_resume = std::move(*journal);
  m_journal_text = std::move(**text);
  if (!m_journal_text.empty() && m_journal_text.back() != '\n') {
    m_journal_text += '\n';  // a damaged last line was dropped; the next starts afresh
  }
  return {};
}

Status TuneSession::read_server(const TuneRequest& request) {
  auto server = launched_server(m_paths);
  if (!server) {
    return server.error();
  }
  m_record = std::move(server->record);
  m_running_pid = server->pid;
  if (m_record.planned.rpc) {
    return Error{
        "the running server was launched across RPC workers (--rpc); tune measures one "
        "machine's server: launch it without --rpc to tune it",
        ExitCode::usage};
  }
  auto settings = recorded_settings(m_record, m_paths.record);
  if (!settings) {
    return settings.error();
  }
  m_settings = std::move(*settings);
  // Started again exactly as it runs: its own environment, not this command's.
  auto server_env = sys::read_process_environ(platform::Sysroot(), server->pid);
  if (!server_env) {
    return Error{fmt::format("the environment of llama-server (pid {}) cannot be read: {}; tune "
                             "could not start it again as it runs now (run as its user)",
                             server->pid, server_env.error().message),
                 ExitCode::failed};
  }
  m_original_env = *server_env;
  auto endpoint = m_env.connect(m_record.url, seconds_of(request.request_timeout_s));
  if (!endpoint) {
    return endpoint.error();
  }
  auto info = endpoint->info();
  if (!info) {
    return info.error();
  }
  m_info = std::move(*info);
  m_count_prompt = endpoint->count_prompt;
  return {};
}

Status TuneSession::prepare_workload(const TuneRequest& request) {
  auto workload = bench::load_workload(request.prompts);
  if (!workload) {
    return workload.error();
  }
  m_workload = std::move(*workload);
  // The depth filler asks for the same prompts again while it sizes them: counted once each.
  const bench::PromptTokenCounter count = bench::remember_counts(m_count_prompt);
  auto notes =
      bench::fit_workload_to_server(m_workload, request.max_context, m_info.n_ctx_per_slot, count);
  if (!notes) {
    return notes.error();
  }
  m_notes.insert(m_notes.end(), notes->begin(), notes->end());
  m_workload_digest = workload_digest(m_workload);
  return deepen_workload(request, count);
}

Status TuneSession::deepen_workload(const TuneRequest& request,
                                    const bench::PromptTokenCounter& count) {
  m_depth = 0;
  if (request.goal == Goal::prefill) {
    if (request.depth > 0) {
      m_notes.push_back(
          "--depth is for the goals that measure decode: the prefill goal measures the "
          "workload's prompts as written");
    }
    return {};
  }
  if (request.depth == 0) {
    return {};
  }
  if (!m_workload.counted) {
    if (request.depth > 0) {
      return Error{fmt::format("--depth {}: the server did not count the prompts' tokens (said "
                               "above), so no filler can be sized to that depth; run tune with "
                               "--depth 0 to measure the workload's prompts as written",
                               request.depth),
                   ExitCode::failed};
    }
    m_notes.push_back(
        "decode is measured at the workload's own depths: without the server's token counts no "
        "depth filler can be sized");
    return {};
  }
  const std::uint64_t slot = m_info.n_ctx_per_slot;
  const std::uint64_t room = slot > 0 ? bench::deepest_fitting(m_workload, slot) : 0;
  std::uint64_t depth = 0;
  std::string why;
  if (request.depth > 0) {
    depth = static_cast<std::uint64_t>(request.depth);
    if (slot > 0 && depth > room) {
      return Error{fmt::format("--depth {} does not fit the server's slot of {} tokens (/props "
                               "n_ctx per slot) with the workload's largest max_tokens ({}): give "
                               "--depth {} at most, or launch with more context per slot (a "
                               "larger -c, or fewer slots with -np)",
                               depth, slot, slot - room, room),
                   ExitCode::usage};
    }
    why = "--depth";
  } else {
    depth = bench::default_depth(m_workload, slot);
    why = slot > 0 && depth == room
              ? fmt::format("the deepest the slot of {} tokens leaves room for", slot)
              : std::string("the workload's deepest prompt");
  }
  if (const Status deepened = bench::deepen_workload(m_workload, depth, count); !deepened) {
    return deepened;
  }
  m_depth = depth;
  m_notes.push_back(fmt::format(
      "decode is measured {} tokens deep ({}): a fixed filler text before each shallower "
      "request's first message brings its prompt to that depth (--depth N to choose, --depth 0 "
      "for the prompts as written)",
      depth, why));
  return {};
}

Status TuneSession::prepare_options(const TuneRequest& request) {
  TuneOptions& o = m_options;
  o.goal = request.goal;
  o.concurrency = request.concurrency;
  o.budget_s = request.budget_s;
  const int requests = static_cast<int>(m_workload.requests.size());
  o.samples = request.samples > 0 ? request.samples : std::min(requests, kDefaultSamples);
  o.knobs = plan_knobs(knob_context(request, m_record, m_settings, m_info, m_env.sysroot));
  if (const Status restricted = restrict_knobs(o.knobs, request.knobs); !restricted) {
    return restricted;
  }
  o.strategy = request.strategy;
  // The knobs' own idea of the current value (threads 0 is the build's default, one per core).
  for (const KnobPlan& plan : o.knobs) {
    if (plan.skipped.empty() && !plan.values.empty()) {
      o.start[std::string(plan.knob->setting)] = plan.values.front();
    }
  }
  watch::ThresholdChoice given;
  if (!request.reserve.empty()) {
    auto warn = size_option("--reserve", request.reserve, 0);
    if (!warn) {
      return warn.error();
    }
    given.warn = *warn;
  }
  if (!request.floor.empty()) {
    auto floor = size_option("--floor", request.floor, 0);
    if (!floor) {
      return floor.error();
    }
    given.floor = *floor;
  }
  // watch's rule: the floor defaults to half of the warning level, here the reserve.
  const std::uint64_t warn = given.warn.value_or(watch::recorded_reserve(&m_record));
  if (given.floor && *given.floor >= warn) {
    return Error{fmt::format("--floor {} is not below the reserve {}: the tune would end at "
                             "once; lower --floor or raise --reserve",
                             request.floor, format_bytes(warn)),
                 ExitCode::usage};
  }
  auto thresholds = watch::resolve_thresholds(given, &m_record);
  if (!thresholds) {
    return thresholds.error();
  }
  o.floor_bytes = thresholds->floor_bytes;
  std::error_code ec;
  const fs::path model = fs::absolute(m_record.model_path, ec);
  o.header.model_path = ec ? m_record.model_path : model.string();
  o.header.build = m_info.build_info;
  o.header.goal = request.goal;
  o.header.concurrency = request.concurrency;
  o.header.workload = fmt::format("{} ({} requests, {})", m_workload.source,
                                  m_workload.requests.size(), m_workload_digest);
  o.header.depth = m_depth;
  o.header.start = o.start;
  o.header.strategy = request.strategy;
  o.header.started_at = m_env.now_iso8601 ? m_env.now_iso8601() : "";
  o.resume = m_resume ? &*m_resume : nullptr;
  return {};
}

Expected<std::unique_ptr<TuneSession>> TuneSession::open(const TuneRequest& request,
                                                         TuneEnvironment environment) {
  std::unique_ptr<TuneSession> s(new TuneSession());
  s->m_env = std::move(environment);
  s->m_request = request;
  const auto dir = trust::private_state_dir(s->m_env.env);
  if (!dir) {
    return dir.error();
  }
  s->m_paths = launch::StatePaths::under(*dir);
  // No launch may take the memory while candidates come and go.
  auto lock = launch::LaunchLock::acquire(s->m_paths);
  if (!lock) {
    return lock.error();
  }
  s->m_lock.emplace(std::move(*lock));
  Status step = s->read_server(request);
  if (step) {
    step = s->prepare_workload(request);
  }
  if (step) {
    step = s->read_journal_for(request.resume);
  }
  if (step) {
    step = s->prepare_options(request);
  }
  if (!step) {
    return step.error();
  }
  s->m_machine = machine_name(s->m_env);
  return s;
}

nlohmann::json TuneSession::full_settings(const nlohmann::json& searched) const {
  nlohmann::json settings = m_settings;
  for (const auto& [key, value] : searched.items()) {
    // A knob left at its start keeps the launch's own spelling (threads 0, not the core count).
    const auto start = m_options.start.find(key);
    if (start == m_options.start.end() || *start != value || !settings.contains(key)) {
      settings[key] = value;
    }
  }
  return settings;
}

nlohmann::json TuneSession::winner_settings(const Measurement& winner) const {
  return full_settings(winner.settings);
}

TunedFor TuneSession::tuned_for(const TuneResult& result) const {
  TunedFor tuned;
  tuned.model_path = m_options.header.model_path;
  tuned.model_name = fs::path(tuned.model_path).filename().string();
  tuned.build = m_info.build_info;
  tuned.machine = m_machine;
  tuned.goal = result.goal == Goal::throughput ? fmt::format("throughput @{}", result.concurrency)
                                               : std::string(to_string(result.goal));
  tuned.workload = m_options.header.workload;
  tuned.tuned_at = m_env.now_iso8601 ? m_env.now_iso8601() : "";
  tuned.gain = result.gain.ratio;
  tuned.gain_low = result.gain.ratio_low;
  tuned.gain_high = result.gain.ratio_high;
  tuned.confidence = result.gain.confidence;
  tuned.server_build = launch::server_build_identity(m_record.server_path);
  tuned.changes = tuned_changes(result);
  if (!result.higher_is_better && result.gain.ratio > 0) {
    // A time: the gain is how much shorter, as a speed-up.
    tuned.gain = 1 / result.gain.ratio;
    tuned.gain_low = result.gain.ratio_high > 0 ? 1 / result.gain.ratio_high : 0;
    tuned.gain_high = result.gain.ratio_low > 0 ? 1 / result.gain.ratio_low : 0;
  }
  return tuned;
}

}  // namespace gb10tune::tune
