// `gb10tune verify`: find the running llama-server(s) and check each one is on the fast path
// (environment, memory, flags, HTTP answers, log, optional smoke completion).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/gpu/gpu_info.hpp"
#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/sys/cpuinfo.hpp"
#include "gb10tune/verify/checks.hpp"
#include "gb10tune/verify/rpc_check.hpp"
#include "gb10tune/verify/server_probe.hpp"

namespace gb10tune::verify {

// The findings of one check group ("process", "environment", "memory", "flags", "server",
// "log", "smoke") for one server.
struct CheckGroup {
  std::string name;
  std::vector<Finding> findings;
};

// Everything verify found about one server process.
struct ServerReport {
  int pid = 0;
  std::string exe;       // its executable, "" when unreadable
  std::string found_by;  // "launch record", "pid file", "--pid", "scan"
  std::string url;       // where the HTTP checks went, "" when none ran
  std::vector<CheckGroup> groups;

  // The worst severity of every finding.
  Severity worst() const;
};

// The whole answer.
struct VerifyResult {
  std::vector<ServerReport> servers;
  // About the search itself: a stale launch record, scripts or zombies named llama-server.
  std::vector<Finding> notes;
  // Set when nothing could be checked: "no llama-server is running".
  std::string no_server;

  // fail when nothing was checked or anything failed, else warn or ok.
  Severity worst() const;
};

// The result of check 3 (flags) for one process, and what the flags make the server's HTTP
// answers expected to be.
struct FlagsOutcome {
  std::vector<Finding> findings;
  Expectations expected;
  std::string url;  // from the effective --host/--port, "" when unknown
};

// Check 3 for one process; `record` is the launch record when it describes this process.
using FlagsChecker =
    std::function<FlagsOutcome(const ProcessSnapshot&, const launch::LaunchRecord* record)>;

// What the command asked for.
struct VerifyOptions {
  std::optional<int> pid;  // --pid: check this process only
  bool smoke = false;      // --smoke: one short chat completion
  std::string url;         // --url: overrides the record's and the flags' URL
};

// What verify may read and ask, so that tests replay fixture machines and fake servers.
struct VerifyServices {
  const platform::Sysroot* root = nullptr;  // /proc of the machine (required)
  std::optional<launch::LaunchRecord> record;
  std::string record_path;          // for messages
  std::optional<int> pid_file_pid;  // from launch's pid file when there is no record
  // Per-process GPU memory; called at most once, and only when a server is found.
  std::function<gpu::NvmlReport()> nvml;
  // Check 3; empty: the flags group says why it was not checked.
  FlagsChecker check_flags;
  std::string flags_unavailable;  // the reason shown when check_flags is empty
  // An HTTP probe of the server at a URL; empty: the server checks are skipped.
  std::function<std::unique_ptr<ServerProbe>(const std::string& url)> connect;
  // The text of a log file (its tail is enough); an Error when it cannot be read.
  std::function<Expected<std::string>(const std::string& path)> read_log;
  // The system_info line of the process's binary (see server::read_build_system_info), asked
  // only when its log has none; empty: the log is the only source.
  std::function<Expected<std::string>(const ProcessSnapshot&)> build_system_info;
  // The RPC workers of a head launched with --rpc (TCP connect, local worker processes).
  RpcWorkerAccess rpc_workers;
};

// What a launch record says the server should look like: its settings, the memory plan's
// figures, and (discrete GPUs) the plan per device and host; a record of an older gb10tune
// without a per-device plan leaves `devices` unset and says why.
Expectations expectations_from_record(const launch::LaunchRecord& record);

// Finds the servers (launch record, else pid file, else a /proc scan; or options.pid) and
// checks each one. Never throws for anything the machine can cause.
VerifyResult run_verify(const VerifyOptions& options, const VerifyServices& services);

// The URL of a server from its argv and environment: --host/--port (or LLAMA_ARG_HOST and
// LLAMA_ARG_PORT), defaulting to 127.0.0.1:8080.
std::string url_from_process(const std::vector<std::string>& argv,
                             const platform::Environment* env);

// The log file a server writes (--log-file / LLAMA_LOG_FILE), "" when none is named.
std::string log_from_process(const std::vector<std::string>& argv,
                             const platform::Environment* env);

}  // namespace gb10tune::verify
