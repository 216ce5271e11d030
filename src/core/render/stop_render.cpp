#include "gb10tune/render/stop_render.hpp"

#include <fmt/format.h>

#include "gb10tune/render/document.hpp"
#include "gb10tune/util/exit_code.hpp"

namespace gb10tune::render {

namespace {

using launch::StopEntry;

// How a stop ended: its message, or the signal that ended it and how long it took.
std::string how_stopped(const StopEntry& entry) {
  if (!entry.message.empty()) {
    return entry.message;
  }
  return fmt::format("{} after {:.1f} s", entry.killed ? "killed with SIGKILL" : "ended on SIGTERM",
                     static_cast<double>(entry.took.count()) / 1000.0);
}

}  // namespace

std::string render_stop_text(const launch::StopOutcome& outcome) {
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
      out += fmt::format("stopped llama-server (pid {}): {}\n", entry.pid, how_stopped(entry));
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

nlohmann::json stop_to_json(const launch::StopOutcome& outcome) {
  nlohmann::json doc = make_document("stop");
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
  if (outcome.failed()) {
    add_failure(doc, to_int(ExitCode::failed), "a process could not be stopped");
  }
  return doc;
}

}  // namespace gb10tune::render
