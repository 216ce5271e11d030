#include "gb10tune/verify/verify.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/launch/rule_verdict.hpp"
#include "gb10tune/platform/proc_files.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/strings.hpp"
#include "verify_targets.hpp"

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

namespace {

// What verify reads from the machine once, for every server it checks.
struct MachineReadings {
  std::optional<gpu::NvmlReport> nvml;
  std::optional<sys::CpuInfo> cpu;
  bool cpu_read = false;
};

// The finding of a process that exited (or whose pid was reused) while verify read it.
Finding process_changed(int pid) {
  Finding gone;
  gone.id = "process-stable";
  gone.severity = Severity::fail;
  gone.summary = "the process stayed the same while it was read";
  gone.evidence = fmt::format("pid {} exited (or was reused) while verify read it", pid);
  gone.fix = "run gb10tune verify again";
  return gone;
}

// The flag findings, or one warning that the flags could not be checked.
FlagsOutcome check_flags_of(const ProcessSnapshot& snapshot, const Target& target,
                            const VerifyServices& services) {
  FlagsOutcome flags;
  if (services.check_flags) {
    return services.check_flags(snapshot, target.record);
  }
  Finding skipped;
  skipped.id = "flags";
  skipped.fact = "K16";
  skipped.severity = Severity::warn;
  skipped.summary = "flags checked against the rules";
  skipped.evidence = services.flags_unavailable.empty()
                         ? std::string("not checked")
                         : "not checked: " + services.flags_unavailable;
  flags.findings.push_back(std::move(skipped));
  return flags;
}

// The server's log: the launch record's, else the process's --log-file, else the file its
// stderr goes to; "" when there is none.
std::string server_log_path(const Target& target, const ProcessSnapshot& snapshot,
                            const platform::Sysroot& root) {
  std::string log_path = target.record != nullptr ? target.record->log_path : std::string();
  if (log_path.empty()) {
    log_path = log_from_process(target.process.argv, snapshot.env ? &*snapshot.env : nullptr);
  }
  if (log_path.empty()) {
    log_path = stderr_file_of(root, target.process.stat.pid);
  }
  return log_path;
}

// The memory and flags groups: the flag findings confirmed by the GPU evidence and noted with
// what launch did about them, GPU advice marked not applicable where there is no GPU.
void add_memory_and_flags(ServerReport& report, const Target& target,
                          const ProcessSnapshot& snapshot, std::vector<Finding> flag_findings,
                          const Expectations& expected, const gpu::NvmlReport& nvml,
                          const GpuLogEvidence* gpu_evidence, const platform::Sysroot& root) {
  std::vector<Finding> memory = check_memory(snapshot, nvml, expected, gpu_evidence);
  for (Finding& finding : flag_findings) {
    confirm_gpu_layers(finding, gpu_evidence, nvml, report.pid, expected);
    if (target.record != nullptr) {
      // What its launch did about the rule: chosen by launch's own settings (⚠, as launch
      // warned) or passed with --force (✘, saying so).
      launch::note_launch_action(finding, launch::recorded_action(*target.record, finding.id));
    }
  }
  // No GPU here (and no RPC workers holding layers): GPU advice is not applied blindly.
  const bool rpc_head = target.record != nullptr && target.record->planned.rpc;
  const bool gpu_seen = sys::nvidia_gpu_count(root) > 0 || sys::is_gb10_machine(root);
  if (const auto why = gpu_checks_not_applicable(gpu_seen, nvml); why && !rpc_head) {
    mark_gpu_checks_not_applicable(memory, *why);
    mark_gpu_checks_not_applicable(flag_findings, *why);
  }
  report.groups.push_back({"memory", std::move(memory)});
  report.groups.push_back({"flags", std::move(flag_findings)});
}

// The URL to ask: --url, else the launch record's, else the one the flags name, else the one
// the process's arguments and environment make.
std::string server_url(const VerifyOptions& options, const Target& target,
                       const FlagsOutcome& flags, const ProcessSnapshot& snapshot) {
  if (!options.url.empty()) {
    return options.url;
  }
  if (target.record != nullptr && !target.record->url.empty()) {
    return target.record->url;
  }
  if (!flags.url.empty()) {
    return flags.url;
  }
  return url_from_process(target.process.argv, snapshot.env ? &*snapshot.env : nullptr);
}

// The server group (its answers, then speculative decoding when it answered) and, with
// --smoke, the smoke group.
void add_server_groups(ServerReport& report, const VerifyOptions& options,
                       const VerifyServices& services, const Expectations& expected,
                       const FlagsOutcome& flags) {
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

// The log group: the checks of the log read, or a warning that it could not be read.
void add_log_group(ServerReport& report, const Expected<std::string>& log_text,
                   const std::string& log_path, const Target& target,
                   const ProcessSnapshot& snapshot, const VerifyServices& services,
                   MachineReadings& readings) {
  if (!readings.cpu_read) {
    readings.cpu_read = true;
    if (auto info = sys::read_cpuinfo(*services.root)) {
      readings.cpu = std::move(*info);
    }
  }
  if (!log_text) {
    Finding unread;
    unread.id = "server-log";
    unread.severity = Severity::warn;
    unread.summary = "the server's log can be read";
    unread.evidence = log_text.error().message;
    unread.fix = "run with sudo, or check --log-file";
    report.groups.push_back({"log", {std::move(unread)}});
    return;
  }
  LogCheckSources sources;
  sources.launched = target.record != nullptr;
  if (services.build_system_info) {
    sources.binary_system_info = [&services, &snapshot] {
      return services.build_system_info(snapshot);
    };
  }
  report.groups.push_back(
      {"log", check_log(*log_text, log_path, readings.cpu ? &*readings.cpu : nullptr, sources)});
}

// Every check of one process, in the order of its report's groups: process, environment,
// memory, flags, rpc (a head launched with --rpc), server and smoke (when it is asked), log.
ServerReport verify_server(const Target& target, const VerifyOptions& options,
                           const VerifyServices& services, MachineReadings& readings) {
  ServerReport report;
  report.pid = target.process.stat.pid;
  report.exe = target.process.exe ? target.process.exe->path : std::string();
  report.found_by = target.found_by;

  CheckGroup process{"process", {}};
  if (!check_process(target.process, target.record, process.findings)) {
    report.groups.push_back(std::move(process));
    return report;
  }
  const ProcessSnapshot snapshot = take_snapshot(*services.root, target.process);
  if (snapshot.changed) {
    process.findings.push_back(process_changed(report.pid));
    report.groups.push_back(std::move(process));
    return report;
  }
  report.groups.push_back(std::move(process));
  report.groups.push_back({"environment", check_environment(snapshot)});

  FlagsOutcome flags = check_flags_of(snapshot, target, services);
  const Expectations expected =
      target.record != nullptr ? expectations_from_record(*target.record) : flags.expected;
  if (!readings.nvml) {
    readings.nvml = services.nvml ? services.nvml() : gpu::NvmlReport{};
  }

  // The log is read before the memory and flag findings: it is their evidence too.
  const std::string log_path = server_log_path(target, snapshot, *services.root);
  std::optional<Expected<std::string>> log_text;
  std::optional<GpuLogEvidence> gpu_log;
  if (!log_path.empty() && services.read_log) {
    log_text = services.read_log(log_path);
    if (*log_text) {
      gpu_log = read_gpu_evidence(**log_text, log_path);
    }
  }
  add_memory_and_flags(report, target, snapshot, std::move(flags.findings), expected,
                       *readings.nvml, gpu_log ? &*gpu_log : nullptr, *services.root);
  // A head launched with --rpc: its workers, without disturbing them.
  if (target.record != nullptr && target.record->planned.rpc) {
    std::string_view head_log;
    if (log_text && *log_text) {
      head_log = latest_run(**log_text);
    }
    report.groups.push_back(
        {"rpc", check_rpc_workers(*target.record->planned.rpc, head_log, target.record->server_path,
                                  services.rpc_workers)});
  }

  report.url = server_url(options, target, flags, snapshot);
  if (services.connect) {
    add_server_groups(report, options, services, expected, flags);
  }
  if (log_text) {
    add_log_group(report, *log_text, log_path, target, snapshot, services, readings);
  }
  return report;
}

}  // namespace

VerifyResult run_verify(const VerifyOptions& options, const VerifyServices& services) {
  VerifyResult result;
  const std::vector<Target> targets = select_targets(options, services, result);
  MachineReadings readings;
  for (const Target& target : targets) {
    result.servers.push_back(verify_server(target, options, services, readings));
  }
  return result;
}

}  // namespace gb10tune::verify
