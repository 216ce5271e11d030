// What `gb10tune rpc start|stop|status` prints about the RPC worker, as text or a JSON document.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/rpc/rpc_client.hpp"
#include "gb10tune/rpc/worker_start.hpp"

namespace gb10tune::render {

// A worker's answer as JSON: its endpoint, protocol version and each device's memory.
nlohmann::json worker_to_json(const rpc::WorkerInfo& info);

// A worker's answer as indented text lines: its protocol, then each device's free and total.
std::string render_worker_text(const rpc::WorkerInfo& info);

// `rpc start`'s document: the worker's pid, bind address, argv, log, time to ready, answer.
nlohmann::json rpc_start_to_json(const rpc::StartedWorker& started, const std::string& bind);

// `rpc start`'s text: the worker ready at `bind`, how to use it from the head and to stop it.
std::string render_rpc_start_text(const rpc::StartedWorker& started, const std::string& bind,
                                  int port);

// `rpc stop`'s document for the worker on `port`: `stopped` null when none ran there.
nlohmann::json rpc_stop_to_json(int port, const launch::StopResult* stopped);

// `rpc stop`'s text for the worker on `port`: `stopped` null when none ran there.
std::string render_rpc_stop_text(int port, const launch::StopResult* stopped);

// What `rpc status` found on a port.
struct RpcStatusView {
  std::string endpoint;                 // host:port of the worker asked
  bool started_by_gb10tune = false;     // a worker of `rpc start` runs there
  int pid = 0;                          // its pid, when started_by_gb10tune
  std::string log;                      // its log, when started_by_gb10tune
  std::string busy;                     // why it was not asked (it serves a head); "" if asked
  std::optional<rpc::WorkerInfo> info;  // its answer, when it was asked and answered
  std::string error;                    // why it did not answer, when it was asked
};

// `rpc status`'s document (a failure in it when the worker was asked and did not answer).
nlohmann::json rpc_status_to_json(const RpcStatusView& status);

// `rpc status`'s text.
std::string render_rpc_status_text(const RpcStatusView& status);

}  // namespace gb10tune::render
