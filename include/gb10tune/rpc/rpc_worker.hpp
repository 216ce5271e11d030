// The worker side of two-machine serving: finding llama.cpp's rpc-server, the command that
// starts it, its clean environment (K2) and where its pid, record and log live.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/rpc/rpc_protocol.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::rpc {

// The names the worker binary has had: `ggml-rpc-server` (the CMake target of 2026 builds)
// and `rpc-server` (older builds), in that order of preference.
inline constexpr const char* kWorkerNames[] = {"ggml-rpc-server", "rpc-server"};

// The worker binary: `explicit_path` when given (made absolute, must be executable), else the
// first of kWorkerNames on PATH. An Error (usage) saying how to build it (-DGGML_RPC=ON) or
// where to point --server-bin.
Expected<std::string> find_worker_binary(const std::string& explicit_path,
                                         const platform::Environment& env);

// What `rpc start` runs.
struct WorkerOptions {
  std::string binary;   // absolute path
  Endpoint bind;        // -H, -p
  bool cache = false;   // -c: keep received tensors in a local file cache
  int threads = 0;      // -t (0: the worker's default)
  std::string devices;  // -d (empty: all)
  bool expose = false;  // allow an any-address bind
};

// The worker's argv (-H gets the bind host without brackets). An Error (usage) for an
// any-address bind in any spelling ("0", "0x0", "000.0.0.0", "::", …) without `expose`: the RPC
// protocol has no authentication, so anyone who reaches the port can run code-sized tensors
// through the worker and read its memory. Also an Error (usage), exposed or not, for a host
// rpc-server cannot bind: it reads -H with inet_addr(), so IPv4 addresses only, no names.
Expected<std::vector<std::string>> worker_argv(const WorkerOptions& options);

// The caller's environment without GGML_CUDA_ENABLE_UNIFIED_MEMORY (K2: a CUDA worker would
// otherwise allocate managed memory); `removed` gets the names taken out.
platform::Environment worker_environment(const platform::Environment& caller,
                                         std::vector<std::string>& removed);

// True when a worker's log (rpc-server prints "Accepted client connection" and "Client
// connection closed" on stdout) shows a client still connected: the worker is busy serving a
// head, and must not be sent an RPC message (it serves one client at a time).
bool worker_log_shows_client(std::string_view log_text);

// The files of the worker bound to `port` under `state_dir`: rpc-<port>.json, .pid, .lock, .log.
launch::StatePaths worker_state_paths(const std::filesystem::path& state_dir, int port);

}  // namespace gb10tune::rpc
