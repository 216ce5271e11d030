#include "gb10tune/render/rpc_render.hpp"

#include <fmt/format.h>

#include "gb10tune/render/document.hpp"
#include "gb10tune/util/exit_code.hpp"
#include "gb10tune/util/shell_quote.hpp"

namespace gb10tune::render {

namespace {

// Bytes in GiB with two decimals: "1.50 GiB".
std::string worker_gib(std::uint64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace

nlohmann::json worker_to_json(const rpc::WorkerInfo& info) {
  nlohmann::json devices = nlohmann::json::array();
  for (std::size_t i = 0; i < info.devices.size(); ++i) {
    devices.push_back({{"index", i},
                       {"free_bytes", info.devices[i].free_bytes},
                       {"total_bytes", info.devices[i].total_bytes}});
  }
  return {{"endpoint", info.endpoint.to_string()},
          {"protocol_version", info.version.to_string()},
          {"devices", devices}};
}

std::string render_worker_text(const rpc::WorkerInfo& info) {
  std::string out = fmt::format("  protocol: {}\n", info.version.to_string());
  for (std::size_t i = 0; i < info.devices.size(); ++i) {
    out += fmt::format("  device {}: {} free of {}\n", i, worker_gib(info.devices[i].free_bytes),
                       worker_gib(info.devices[i].total_bytes));
  }
  return out;
}

nlohmann::json rpc_start_to_json(const rpc::StartedWorker& started, const std::string& bind) {
  nlohmann::json doc = make_document("rpc start");
  doc["pid"] = started.pid;
  doc["bind"] = bind;
  doc["argv"] = started.argv;
  doc["env_removed"] = started.env_removed;
  doc["log"] = started.log.string();
  doc["ready_after_ms"] = started.to_ready.count();
  doc["worker"] = worker_to_json(started.info);
  return doc;
}

std::string render_rpc_start_text(const rpc::StartedWorker& started, const std::string& bind,
                                  int port) {
  return fmt::format(
      "RPC worker ready at {} (pid {}, after {:.1f} s)\n{}  command: {}\n  log:     {}\n"
      "  head:    llama-server --rpc {} …\n  stop:    gb10tune rpc stop --port {}\n",
      bind, started.pid, static_cast<double>(started.to_ready.count()) / 1000.0,
      render_worker_text(started.info), shell_join(started.argv), started.log.string(), bind, port);
}

nlohmann::json rpc_stop_to_json(int port, const launch::StopResult* stopped) {
  nlohmann::json doc = make_document("rpc stop");
  doc["port"] = port;
  doc["stopped"] = stopped != nullptr;
  if (stopped == nullptr) {
    doc["running"] = false;
  } else {
    doc["pid"] = stopped->pid;
    doc["killed"] = stopped->killed;
  }
  return doc;
}

std::string render_rpc_stop_text(int port, const launch::StopResult* stopped) {
  if (stopped == nullptr) {
    return fmt::format("no RPC worker started by gb10tune runs on port {}\n", port);
  }
  return fmt::format("stopped the RPC worker on port {} (pid {}{})\n", port, stopped->pid,
                     stopped->killed ? ", needed SIGKILL" : "");
}

nlohmann::json rpc_status_to_json(const RpcStatusView& status) {
  nlohmann::json doc = make_document("rpc status");
  doc["busy"] = !status.busy.empty();
  doc["endpoint"] = status.endpoint;
  doc["started_by_gb10tune"] = status.started_by_gb10tune;
  if (status.started_by_gb10tune) {
    doc["pid"] = status.pid;
    doc["log"] = status.log;
  }
  if (!status.busy.empty()) {
    doc["answers"] = nullptr;
    doc["note"] = status.busy;
    return doc;
  }
  doc["answers"] = status.info.has_value();
  if (status.info) {
    doc["worker"] = worker_to_json(*status.info);
  } else {
    add_failure(doc, to_int(ExitCode::failed), status.error);
  }
  return doc;
}

std::string render_rpc_status_text(const RpcStatusView& status) {
  if (!status.busy.empty()) {
    return fmt::format("RPC worker {} started by gb10tune: pid {}, {}\n", status.endpoint,
                       status.pid, status.busy);
  }
  std::string out;
  if (status.started_by_gb10tune) {
    out += fmt::format("RPC worker {} started by gb10tune: pid {}, log {}\n", status.endpoint,
                       status.pid, status.log);
  }
  if (status.info) {
    out +=
        fmt::format("RPC worker {} answers\n{}", status.endpoint, render_worker_text(*status.info));
  } else {
    out += fmt::format("RPC worker {} does not answer: {}\n", status.endpoint, status.error);
  }
  return out;
}

}  // namespace gb10tune::render
