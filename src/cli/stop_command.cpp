#include "stop_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/sys/process_owner.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "number_option.hpp"
#include "renamed_option.hpp"

namespace gb10tune::cli {

namespace {

using std::chrono::milliseconds;

struct StopOptions {
  bool all = false;
  bool json = false;
  double grace_s = 30;
  std::vector<RenamedOption> renamed;
};

// One process stop tried (or refused).
struct StopEntry {
  int pid = 0;
  std::string exe;
  bool launched = false;  // the server of the pid file
  bool stopped = false;
  bool killed = false;
  milliseconds took{0};
  std::string message;  // why it was not stopped
};

// Everything `stop` found and did, computed before anything is printed.
struct StopOutcome {
  launch::PidFileStatus pid_file;
  std::string pid_file_path;
  bool stale_removed = false;
  bool all = false;
  std::vector<StopEntry> listed;  // --all: the processes found, in pid order
  std::vector<StopEntry> entries;
  std::size_t skipped_other_users = 0;
  // The RPC workers the stopped server used (from its launch record): they keep running, each
  // stopped on its own machine with `gb10tune rpc stop`.
  std::vector<std::string> rpc_workers;

  bool failed() const {
    for (const StopEntry& entry : entries) {
      if (!entry.stopped) {
        return true;
      }
    }
    return false;
  }
};

std::string_view state_name(launch::PidFileState state) {
  switch (state) {
    case launch::PidFileState::none:
      return "none";
    case launch::PidFileState::running:
      return "running";
    case launch::PidFileState::stale:
      return "stale";
  }
  return "none";
}

void record_stop(StopEntry& entry, const Expected<launch::StopResult>& result) {
  if (result) {
    entry.stopped = true;
    entry.killed = result->killed;
    entry.took = result->took;
  } else {
    entry.message = result.error().message;
  }
}

Expected<StopOutcome> compute(const StopOptions& options, Context& ctx) {
  const auto dir = trust::private_state_dir(ctx.env);
  if (!dir) {
    return dir.error();  // no HOME (usage), or a state directory not to be believed
  }
  const launch::StatePaths paths = launch::StatePaths::under(*dir);
  const milliseconds grace{static_cast<long>(options.grace_s * 1000.0)};
  StopOutcome outcome;
  outcome.all = options.all;
  outcome.pid_file_path = paths.pid_file.string();
  outcome.pid_file = launch::check_pid_file(ctx.sysroot, paths);
  if (outcome.pid_file.state == launch::PidFileState::stale) {
    // Its pid is not (or no longer provably) ours: never signalled, the file goes.
    launch::clear_launch_state(paths);
    outcome.stale_removed = true;
  }

  // --all: list first (so that the user sees what will stop), then stop.
  if (options.all) {
    const unsigned uid = platform::current_uid();
    for (const sys::ServerCandidate& candidate : sys::find_running_servers(ctx.sysroot)) {
      const auto owner = sys::read_process_uid(ctx.sysroot, candidate.stat.pid);
      if (!owner || *owner != uid) {
        ++outcome.skipped_other_users;
        continue;
      }
      StopEntry entry;
      entry.pid = candidate.stat.pid;
      entry.exe = candidate.exe ? candidate.exe->path : candidate.stat.comm;
      entry.launched = outcome.pid_file.server && outcome.pid_file.server->pid == entry.pid;
      outcome.listed.push_back(entry);
    }
  }

  if (outcome.pid_file.server) {
    StopEntry entry;
    entry.pid = outcome.pid_file.server->pid;
    entry.exe = outcome.pid_file.server->record.server_path;
    entry.launched = true;
    if (const auto& rpc = outcome.pid_file.server->record.planned.rpc) {
      for (const launch::RecordedWorker& worker : rpc->workers) {
        if (!worker.endpoint.empty()) {
          outcome.rpc_workers.push_back(worker.endpoint);
        }
      }
    }
    record_stop(entry, launch::stop_server(ctx.sysroot, paths, grace));
    outcome.entries.push_back(std::move(entry));
  }
  if (options.all) {
    const auto candidates = outcome.listed;
    for (StopEntry entry : candidates) {
      if (entry.launched) {
        continue;  // stopped above, through the pid file
      }
      const auto stat = sys::read_process_stat(ctx.sysroot, entry.pid);
      if (!stat) {
        entry.message = fmt::format("process {} exited before it was stopped", entry.pid);
        entry.stopped = true;
      } else {
        record_stop(entry,
                    launch::stop_process(ctx.sysroot, entry.pid, stat->start_time_ticks, grace));
      }
      outcome.entries.push_back(std::move(entry));
    }
  }
  return outcome;
}

std::string how(const StopEntry& entry) {
  if (!entry.message.empty()) {
    return entry.message;
  }
  return fmt::format("{} after {:.1f} s", entry.killed ? "killed with SIGKILL" : "ended on SIGTERM",
                     static_cast<double>(entry.took.count()) / 1000.0);
}

std::string render_text(const StopOutcome& outcome) {
  std::string out;
  if (outcome.stale_removed) {
    out += fmt::format("the pid file {} was stale: {}; it was removed and nothing was signalled\n",
                       outcome.pid_file_path, outcome.pid_file.why);
  }
  if (outcome.all) {
    if (outcome.listed.empty()) {
      out += "no llama-server of yours is running\n";
    } else {
      out += fmt::format("llama-server processes of yours ({}):\n", outcome.listed.size());
      for (const StopEntry& entry : outcome.listed) {
        out += fmt::format("  pid {:<8} {}{}\n", entry.pid, entry.exe,
                           entry.launched ? "  (started by gb10tune launch)" : "");
      }
    }
    if (outcome.skipped_other_users > 0) {
      out += fmt::format("{} llama-server process(es) of other users left alone\n",
                         outcome.skipped_other_users);
    }
  } else if (outcome.entries.empty()) {
    out += "no llama-server started by gb10tune is running\n";
  }
  for (const StopEntry& entry : outcome.entries) {
    if (entry.stopped && entry.message.empty()) {
      out += fmt::format("stopped llama-server (pid {}): {}\n", entry.pid, how(entry));
    } else if (entry.stopped) {
      out += fmt::format("llama-server (pid {}): {}\n", entry.pid, entry.message);
    } else {
      out += fmt::format("could not stop llama-server (pid {}): {}\n", entry.pid, entry.message);
    }
  }
  for (const std::string& worker : outcome.rpc_workers) {
    out += fmt::format(
        "RPC worker {} keeps running: stop it there with `gb10tune rpc stop --port "
        "{}`\n",
        worker, worker.substr(worker.rfind(':') + 1));
  }
  return out;
}

nlohmann::json render_json(const StopOutcome& outcome) {
  nlohmann::json doc = report::make_document("stop");
  nlohmann::json pid_file = {{"path", outcome.pid_file_path},
                             {"state", state_name(outcome.pid_file.state)},
                             {"removed", outcome.stale_removed}};
  if (outcome.pid_file.pid > 0) {
    pid_file["pid"] = outcome.pid_file.pid;
  }
  if (!outcome.pid_file.why.empty()) {
    pid_file["why"] = outcome.pid_file.why;
  }
  doc["pid_file"] = pid_file;
  doc["all"] = outcome.all;
  nlohmann::json processes = nlohmann::json::array();
  for (const StopEntry& entry : outcome.entries) {
    nlohmann::json item = {
        {"pid", entry.pid},         {"exe", entry.exe},       {"started_by_launch", entry.launched},
        {"stopped", entry.stopped}, {"killed", entry.killed}, {"took_ms", entry.took.count()}};
    if (!entry.message.empty()) {
      item["message"] = entry.message;
    }
    processes.push_back(std::move(item));
  }
  doc["processes"] = std::move(processes);
  doc["other_users_skipped"] = outcome.skipped_other_users;
  doc["rpc_workers_left_running"] = outcome.rpc_workers;
  return doc;
}

ExitCode run(const StopOptions& options, Context& ctx) {
  note_renamed(options.renamed, ctx);
  auto outcome = compute(options, ctx);
  if (!outcome) {
    return report_failure(ctx, outcome.error());
  }
  if (options.json) {
    auto doc = render_json(*outcome);
    if (outcome->failed()) {
      report::add_failure(doc, to_int(ExitCode::failed), "a process could not be stopped");
    }
    *ctx.out << report::dump_document(doc);
  } else {
    *ctx.out << render_text(*outcome);
  }
  return outcome->failed() ? ExitCode::failed : ExitCode::ok;
}

}  // namespace

Runner setup_stop(CLI::App& app) {
  auto options = std::make_shared<StopOptions>();
  CLI::App* sub = app.add_subcommand(
      "stop",
      "Stop the llama-server that gb10tune launch started (checked by pid, start time and "
      "executable, so that a reused pid is never signalled): SIGTERM, then SIGKILL after the "
      "timeout.");
  sub->add_flag("--all", options->all,
                "Stop every llama-server process of this user, listed first, including ones "
                "gb10tune did not start");
  sub->add_option("--grace", options->grace_s,
                  "Seconds to wait after SIGTERM before SIGKILL (default 30)")
      ->check(finite_range(0.0, 3600.0))
      ->option_text("SECONDS");
  keep_renamed(
      sub->add_option("--timeout", options->grace_s)->check(finite_range(0.0, 3600.0, "--timeout")),
      "--grace", options->renamed);
  sub->add_flag("--json", options->json, "Print one JSON document");
  sub->footer(exit_code_footer({{ExitCode::ok, "stopped, or nothing to stop"},
                                {ExitCode::failed, "a process could not be stopped"},
                                {ExitCode::usage}}));
  return [options](Context& ctx) { return run(*options, ctx); };
}

}  // namespace gb10tune::cli
