#include "stop_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/launch/stop_servers.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/report/document.hpp"
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

using launch::StopEntry;
using launch::StopOutcome;

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
                             {"state", launch::pid_file_state_name(outcome.pid_file.state)},
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
  const auto dir = trust::private_state_dir(ctx.env);
  if (!dir) {
    return report_failure(ctx, dir.error());  // no HOME (usage), or a state dir not believed
  }
  const launch::StatePaths paths = launch::StatePaths::under(*dir);
  const StopOutcome outcome = launch::stop_found(
      ctx.sysroot, paths,
      launch::find_servers_to_stop(ctx.sysroot, paths, {options.all, platform::current_uid()}),
      milliseconds{static_cast<long>(options.grace_s * 1000.0)});
  if (options.json) {
    auto doc = render_json(outcome);
    if (outcome.failed()) {
      report::add_failure(doc, to_int(ExitCode::failed), "a process could not be stopped");
    }
    *ctx.out << report::dump_document(doc);
  } else {
    *ctx.out << render_text(outcome);
  }
  return outcome.failed() ? ExitCode::failed : ExitCode::ok;
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
