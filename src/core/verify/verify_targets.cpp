#include "verify_targets.hpp"

#include <fmt/format.h>

namespace gb10tune::verify {

namespace {

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

}  // namespace

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
}  // namespace gb10tune::verify
