#include "gb10tune/verify/verify.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/launch/rule_verdict.hpp"
#include "gb10tune/platform/proc_files.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::verify {

namespace {

// not_applicable < ok < warn < fail.
int rank(Severity severity) {
  return severity == Severity::not_applicable ? -1 : static_cast<int>(severity);
}

Severity worse(Severity a, Severity b) {
  return rank(a) >= rank(b) ? a : b;
}

Severity worst_of(const std::vector<Finding>& findings) {
  Severity worst = Severity::ok;
  for (const Finding& finding : findings) {
    worst = worse(worst, finding.severity);
  }
  return worst;
}

// The value of option `names` in argv ("--port 8080" or "--port=8080"); the last one wins.
std::optional<std::string> argv_value(const std::vector<std::string>& argv,
                                      std::initializer_list<std::string_view> names) {
  std::optional<std::string> value;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    for (std::string_view name : names) {
      if (argv[i] == name && i + 1 < argv.size()) {
        value = argv[i + 1];
      } else if (starts_with(argv[i], name) && argv[i].size() > name.size() &&
                 argv[i][name.size()] == '=') {
        value = argv[i].substr(name.size() + 1);
      }
    }
  }
  return value;
}

std::string describe_process(const sys::ServerCandidate& process) {
  return fmt::format("pid {} ({}{})", process.stat.pid,
                     process.exe ? process.exe->path : std::string("executable unreadable"),
                     process.argv.empty() ? "" : fmt::format(", argv[0] {}", process.argv.front()));
}

// A note on a process that carries the name but is not checked.
Finding skipped_note(const sys::ServerCandidate& process) {
  Finding note;
  note.id = "not-a-server";
  note.severity = Severity::warn;
  note.summary = "a process named llama-server that is not one";
  switch (process.kind) {
    case sys::CandidateKind::exited:
      note.id = "exited-server";
      note.evidence = fmt::format(
          "pid {} ({}) has exited and is a zombie: its parent (pid {}) has not reaped it",
          process.stat.pid, process.stat.comm, process.stat.ppid);
      note.fix = "nothing to check in a dead process; restart the server";
      break;
    case sys::CandidateKind::script:
      note.evidence = fmt::format(
          "{} is a script run by {}, not the server; not checked (its environment is not the "
          "server's)",
          describe_process(process), process.exe ? process.exe->basename() : "?");
      note.fix = fmt::format(
          "check the server it starts with --pid, or name the script "
          "something other than {}",
          sys::kServerName);
      break;
    default:
      note.evidence = fmt::format("{} is named {} but runs another program; not checked",
                                  describe_process(process), sys::kServerName);
      note.fix = "pass --pid to check it anyway";
      break;
  }
  return note;
}

// The file the server's stderr goes to (/proc/<pid>/fd/2) when it is a file: a server started
// by hand with `2>>server.log` logs there, the no-usable-GPU warning included. "" otherwise
// (a terminal, a pipe, a socket, unreadable).
std::string stderr_file_of(const platform::Sysroot& root, int pid) {
  const platform::RawRead link = platform::read_link_raw(root, fmt::format("/proc/{}/fd/2", pid));
  if (!link.ok() || link.content.empty() || link.content.front() != '/' ||
      starts_with(link.content, "/dev/") || link.content.ends_with(" (deleted)")) {
    return "";
  }
  return link.content;
}

// The per-device plan of a launch record, or why there is none: a record of a gb10tune before
// per-device plans has none; one planned as one pool says so.
void device_expectations(const launch::RecordedDevices& devices, Expectations& expected) {
  if (devices.kind == launch::DevicePlanKind::not_recorded) {
    expected.no_device_plan =
        "the launch record has no per-device plan (written by a gb10tune before per-device "
        "plans)";
    return;
  }
  if (devices.kind == launch::DevicePlanKind::one_pool) {
    expected.no_device_plan =
        "the launch record planned one pool (no discrete GPU was seen when it was launched)";
    return;
  }
  std::vector<DeviceExpectation> gpus;
  for (const launch::RecordedGpu& gpu : devices.gpus) {
    gpus.push_back({gpu.name, gpu.description, gpu.pci_bus_id, gpu.total_bytes, gpu.service_bytes});
  }
  expected.devices = std::move(gpus);
  if (devices.host) {
    const launch::RecordedHost& host = *devices.host;
    expected.host_load_bytes = host.load_bytes();
    expected.host_weights_bytes = host.weights_bytes + host.mapped_extra_bytes;
    expected.host_total_bytes = host.total_bytes.value_or(host.load_bytes());
    expected.host_service_bytes = host.service_bytes;
  }
}

// Expectations from the launch record (what launch planned).
Expectations record_expectations(const launch::LaunchRecord& record) {
  Expectations expected;
  expected.source = "launch record";
  expected.slots = record.slots;
  if (record.ctx_per_slot > 0) {
    // The model's training context caps what the server reports per slot.
    expected.ctx_per_slot = server_ctx_per_slot(record.ctx_per_slot * record.slots, record.slots,
                                                record.kv_unified, record.planned.context_length);
  }
  expected.speculative = record.mtp;
  expected.spec_type = record.mtp ? "draft-mtp" : "none";
  if (record.mtp) {
    expected.draft_n_max = record.draft_n_max > 0 ? record.draft_n_max : 3;
  }
  expected.model_has_mtp = record.model_has_mtp;
  // /props echoes the -m argument as given.
  if (const auto model = argv_value(record.argv, {"-m", "--model"})) {
    expected.model_path = *model;
  }
  if (record.expected_weights_bytes > 0) {
    expected.weights_bytes = record.expected_weights_bytes;
    expected.kv_bytes = record.expected_kv_bytes;
  }
  if (record.expected_load_bytes > 0) {
    expected.load_bytes = record.expected_load_bytes;
    expected.on_demand_bytes = record.expected_on_demand_bytes;
    expected.cache_ram_bytes = record.expected_cache_ram_bytes;
    expected.projector_bytes = record.expected_projector_bytes;
    expected.backend = record.backend;
    expected.plan_estimate = record.plan_estimate;
  }
  device_expectations(record.planned.devices, expected);
  return expected;
}

// The checks of the process group; false when the process cannot be checked further.
bool check_process(const sys::ServerCandidate& process, const launch::LaunchRecord* record,
                   std::vector<Finding>& findings) {
  Finding identity;
  identity.id = "process-identity";
  identity.summary = "the process is a running llama-server";
  const int pid = process.stat.pid;
  switch (process.kind) {
    case sys::CandidateKind::exited:
      identity.severity = Severity::fail;
      identity.evidence = fmt::format(
          "pid {} ({}) has exited (state {}): a zombie its parent (pid {}) has not reaped", pid,
          process.stat.comm, process.stat.state, process.stat.ppid);
      identity.fix = "restart the server (gb10tune launch)";
      findings.push_back(std::move(identity));
      return false;
    case sys::CandidateKind::script:
      identity.severity = Severity::fail;
      identity.evidence = fmt::format(
          "pid {} runs {}: a script, not llama-server; its environment is not the server's", pid,
          process.exe->path);
      identity.fix = "pass the pid of the llama-server it started";
      findings.push_back(std::move(identity));
      return false;
    case sys::CandidateKind::other:
      identity.severity = Severity::fail;
      identity.evidence = fmt::format(
          "pid {} is not a llama-server: it runs {} (comm {}); its executable is unreadable ({})",
          pid, process.argv.empty() ? std::string("no command line") : process.argv.front(),
          process.stat.comm, process.exe_error ? process.exe_error->message : "exe unreadable");
      identity.fix = "pass the pid of a llama-server (pgrep -x llama-server lists them)";
      findings.push_back(std::move(identity));
      return false;
    case sys::CandidateKind::foreign:
      identity.severity = Severity::warn;
      identity.evidence = fmt::format("pid {} runs {}, not a file named {}", pid, process.exe->path,
                                      sys::kServerName);
      identity.fix = "check that this is the server you meant";
      break;
    case sys::CandidateKind::server:
      if (!process.exe) {
        identity.severity = Severity::warn;
        identity.evidence = process.exe_error ? process.exe_error->message : "exe unreadable";
        identity.fix = "run 'sudo gb10tune verify' to see the server's executable";
      } else if (process.exe->deleted) {
        identity.severity = Severity::warn;
        identity.fact = "K15";
        identity.evidence =
            fmt::format("{} was replaced or deleted after pid {} started: it runs an older build",
                        process.exe->path, pid);
        identity.fix = "restart the server to run the installed build";
      } else {
        identity.evidence = fmt::format("pid {} runs {}", pid, process.exe->path);
      }
      break;
  }
  if (record != nullptr) {
    identity.evidence += fmt::format(", started by gb10tune launch at {}", record->launched_at);
  }
  findings.push_back(std::move(identity));
  return true;
}

struct Target {
  sys::ServerCandidate process;
  std::string found_by;
  const launch::LaunchRecord* record = nullptr;
};

// Which processes to check, and notes about the search.
std::vector<Target> select_targets(const VerifyOptions& options, const VerifyServices& services,
                                   VerifyResult& result) {
  const platform::Sysroot& root = *services.root;
  std::vector<Target> targets;
  const launch::LaunchRecord* record = services.record ? &*services.record : nullptr;
  const auto record_matches = [&](const sys::ServerCandidate& process) {
    return record != nullptr && process.stat.pid == record->pid &&
           process.stat.start_time_ticks == record->start_time_ticks;
  };

  if (options.pid) {
    auto process = sys::inspect_process(root, *options.pid);
    if (!process) {
      result.no_server =
          fmt::format("no process {} is running ({})", *options.pid, process.error().message);
      return targets;
    }
    const bool matches = record_matches(*process);
    targets.push_back({std::move(process).value(), "--pid", matches ? record : nullptr});
    return targets;
  }

  if (record != nullptr) {
    auto process = sys::inspect_process(root, record->pid);
    if (process && record_matches(*process)) {
      targets.push_back({std::move(process).value(), "launch record", record});
      return targets;
    }
    Finding stale;
    stale.id = "stale-launch-record";
    stale.severity = Severity::warn;
    stale.summary = "the server gb10tune launched is running";
    stale.fix = "start the server with gb10tune launch to have it checked against its plan";
    if (!process) {
      stale.evidence =
          fmt::format("{} names pid {}, which is not running", services.record_path, record->pid);
    } else {
      stale.evidence = fmt::format(
          "{} names pid {} started at tick {}, but pid {} is now another process (started at "
          "tick {}, {}): the pid was reused",
          services.record_path, record->pid, record->start_time_ticks, record->pid,
          process->stat.start_time_ticks, process->exe ? process->exe->path : process->stat.comm);
    }
    result.notes.push_back(std::move(stale));
  } else if (services.pid_file_pid) {
    auto process = sys::inspect_process(root, *services.pid_file_pid);
    if (process && process->kind == sys::CandidateKind::server && process->exe &&
        process->exe->basename() == sys::kServerName) {
      targets.push_back({std::move(process).value(), "pid file", nullptr});
      return targets;
    }
    Finding stale;
    stale.id = "stale-pid-file";
    stale.severity = Severity::warn;
    stale.summary = "the pid file names a running llama-server";
    stale.evidence = process
                         ? fmt::format("the pid file names pid {}, now {}", *services.pid_file_pid,
                                       process->exe ? process->exe->path : process->stat.comm)
                         : fmt::format("the pid file names pid {}, which is not running",
                                       *services.pid_file_pid);
    stale.fix = "remove the stale pid file (gb10tune stop does)";
    result.notes.push_back(std::move(stale));
  }

  for (sys::ServerCandidate& process : sys::find_llama_servers(root)) {
    if (sys::is_running_server(process)) {
      const bool matches = record_matches(process);
      targets.push_back({std::move(process), "scan", matches ? record : nullptr});
    } else {
      result.notes.push_back(skipped_note(process));
    }
  }
  if (targets.empty()) {
    result.no_server = "no llama-server is running";
  }
  return targets;
}

}  // namespace

Expectations expectations_from_record(const launch::LaunchRecord& record) {
  return record_expectations(record);
}

Severity ServerReport::worst() const {
  Severity worst = Severity::ok;
  for (const CheckGroup& group : groups) {
    worst = worse(worst, worst_of(group.findings));
  }
  return worst;
}

Severity VerifyResult::worst() const {
  if (!no_server.empty() || servers.empty()) {
    return Severity::fail;
  }
  Severity worst = worst_of(notes);
  for (const ServerReport& server : servers) {
    worst = worse(worst, server.worst());
  }
  return worst;
}

std::string url_from_process(const std::vector<std::string>& argv,
                             const platform::Environment* env) {
  std::string host = "127.0.0.1";
  std::string port = "8080";
  if (env != nullptr) {
    host = env->get("LLAMA_ARG_HOST").value_or(host);
    port = env->get("LLAMA_ARG_PORT").value_or(port);
  }
  host = argv_value(argv, {"--host"}).value_or(host);
  port = argv_value(argv, {"--port"}).value_or(port);
  // llama-server binds --host through getaddrinfo(): every spelling of the any-address is
  // asked on the loopback address.
  return fmt::format("http://{}", format_host_port(reachable_host(host), port));
}

std::string log_from_process(const std::vector<std::string>& argv,
                             const platform::Environment* env) {
  std::string log;
  if (env != nullptr) {
    log = env->get("LLAMA_ARG_LOG_FILE").value_or("");
  }
  return argv_value(argv, {"--log-file"}).value_or(log);
}

VerifyResult run_verify(const VerifyOptions& options, const VerifyServices& services) {
  VerifyResult result;
  std::vector<Target> targets = select_targets(options, services, result);
  if (targets.empty()) {
    return result;
  }
  std::optional<gpu::NvmlReport> nvml;
  std::optional<sys::CpuInfo> cpu;
  bool cpu_read = false;
  for (Target& target : targets) {
    ServerReport report;
    report.pid = target.process.stat.pid;
    report.exe = target.process.exe ? target.process.exe->path : std::string();
    report.found_by = target.found_by;

    CheckGroup process{"process", {}};
    const bool checkable = check_process(target.process, target.record, process.findings);
    if (!checkable) {
      report.groups.push_back(std::move(process));
      result.servers.push_back(std::move(report));
      continue;
    }
    ProcessSnapshot snapshot = take_snapshot(*services.root, target.process);
    if (snapshot.changed) {
      Finding gone;
      gone.id = "process-stable";
      gone.severity = Severity::fail;
      gone.summary = "the process stayed the same while it was read";
      gone.evidence = fmt::format("pid {} exited (or was reused) while verify read it", report.pid);
      gone.fix = "run gb10tune verify again";
      process.findings.push_back(std::move(gone));
      report.groups.push_back(std::move(process));
      result.servers.push_back(std::move(report));
      continue;
    }
    report.groups.push_back(std::move(process));
    report.groups.push_back({"environment", check_environment(snapshot)});

    Expectations expected;
    if (target.record != nullptr) {
      expected = expectations_from_record(*target.record);
    }
    FlagsOutcome flags;
    if (services.check_flags) {
      flags = services.check_flags(snapshot, target.record);
    } else {
      Finding skipped;
      skipped.id = "flags";
      skipped.fact = "K16";
      skipped.severity = Severity::warn;
      skipped.summary = "flags checked against the rules";
      skipped.evidence = services.flags_unavailable.empty()
                             ? std::string("not checked")
                             : "not checked: " + services.flags_unavailable;
      flags.findings.push_back(std::move(skipped));
    }
    if (target.record == nullptr) {
      expected = flags.expected;
    }

    if (!nvml) {
      nvml = services.nvml ? services.nvml() : gpu::NvmlReport{};
    }

    // The log is read before the memory and flag findings: it is their evidence too.
    std::string log_path = target.record != nullptr ? target.record->log_path : std::string();
    if (log_path.empty()) {
      log_path = log_from_process(target.process.argv, snapshot.env ? &*snapshot.env : nullptr);
    }
    if (log_path.empty()) {
      log_path = stderr_file_of(*services.root, report.pid);
    }
    std::optional<Expected<std::string>> log_text;
    std::optional<GpuLogEvidence> gpu_log;
    if (!log_path.empty() && services.read_log) {
      log_text = services.read_log(log_path);
      if (*log_text) {
        gpu_log = read_gpu_evidence(**log_text, log_path);
      }
    }
    const GpuLogEvidence* gpu_evidence = gpu_log ? &*gpu_log : nullptr;

    std::vector<Finding> memory = check_memory(snapshot, *nvml, expected, gpu_evidence);
    for (Finding& finding : flags.findings) {
      confirm_gpu_layers(finding, gpu_evidence, *nvml, report.pid, expected);
      if (target.record != nullptr) {
        // What its launch did about the rule: chosen by launch's own settings (⚠, as launch
        // warned) or passed with --force (✘, saying so).
        launch::note_launch_action(finding, launch::recorded_action(*target.record, finding.id));
      }
    }
    // No GPU here (and no RPC workers holding layers): GPU advice is not applied blindly.
    const bool rpc_head = target.record != nullptr && target.record->planned.rpc;
    const bool gpu_seen =
        sys::nvidia_gpu_count(*services.root) > 0 || sys::is_gb10_machine(*services.root);
    if (const auto why = gpu_checks_not_applicable(gpu_seen, *nvml); why && !rpc_head) {
      mark_gpu_checks_not_applicable(memory, *why);
      mark_gpu_checks_not_applicable(flags.findings, *why);
    }
    report.groups.push_back({"memory", std::move(memory)});
    report.groups.push_back({"flags", std::move(flags.findings)});
    // A head launched with --rpc: its workers, without disturbing them.
    if (rpc_head) {
      std::string_view head_log;
      if (log_text && *log_text) {
        head_log = latest_run(**log_text);
      }
      report.groups.push_back(
          {"rpc", check_rpc_workers(*target.record->planned.rpc, head_log,
                                    target.record->server_path, services.rpc_workers)});
    }

    if (!options.url.empty()) {
      report.url = options.url;
    } else if (target.record != nullptr && !target.record->url.empty()) {
      report.url = target.record->url;
    } else if (!flags.url.empty()) {
      report.url = flags.url;
    } else {
      report.url = url_from_process(target.process.argv, snapshot.env ? &*snapshot.env : nullptr);
    }
    if (services.connect) {
      std::unique_ptr<ServerProbe> probe = services.connect(report.url);
      ServerAnswers answers;
      std::vector<Finding> server = check_server(*probe, expected, report.url, &answers);
      const bool answered = server.size() > 1;  // /health said ready
      std::vector<Finding> smoke;
      if (options.smoke) {
        smoke = check_smoke(*probe, &answers);
      }
      if (answered) {
        server.push_back(
            check_speculative(expected, services.check_flags ? &flags.expected : nullptr, answers));
      }
      report.groups.push_back({"server", std::move(server)});
      if (options.smoke) {
        report.groups.push_back({"smoke", std::move(smoke)});
      }
    }

    if (log_text) {
      if (!cpu_read) {
        cpu_read = true;
        if (auto info = sys::read_cpuinfo(*services.root)) {
          cpu = std::move(*info);
        }
      }
      if (const Expected<std::string>& text = *log_text) {
        LogCheckSources sources;
        sources.launched = target.record != nullptr;
        if (services.build_system_info) {
          sources.binary_system_info = [&services, &snapshot] {
            return services.build_system_info(snapshot);
          };
        }
        report.groups.push_back(
            {"log", check_log(*text, log_path, cpu ? &*cpu : nullptr, sources)});
      } else {
        Finding unread;
        unread.id = "server-log";
        unread.severity = Severity::warn;
        unread.summary = "the server's log can be read";
        unread.evidence = text.error().message;
        unread.fix = "run with sudo, or check --log-file";
        report.groups.push_back({"log", {std::move(unread)}});
      }
    }
    result.servers.push_back(std::move(report));
  }
  return result;
}

}  // namespace gb10tune::verify
