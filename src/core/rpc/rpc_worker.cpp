// Finding, commanding and filing the rpc-server worker.
#include "gb10tune/rpc/rpc_worker.hpp"

#include <fmt/format.h>

#include "gb10tune/launch/server_binary.hpp"

namespace gb10tune::rpc {

namespace {

constexpr const char* kHowToBuild =
    "build llama.cpp with -DGGML_RPC=ON (`cmake --build build --target ggml-rpc-server`) and put "
    "build/bin on PATH, or give --server-bin PATH";

}  // namespace

Expected<std::string> find_worker_binary(const std::string& explicit_path,
                                         const platform::Environment& env) {
  if (!explicit_path.empty()) {
    auto found = launch::resolve_server_binary(
        explicit_path.find('/') == std::string::npos ? "./" + explicit_path : explicit_path, env);
    if (!found) {
      return Error{fmt::format("the RPC worker binary {} does not exist or is not executable; {}",
                               explicit_path, kHowToBuild),
                   ExitCode::usage};
    }
    return found;
  }
  for (const char* name : kWorkerNames) {
    if (auto found = launch::resolve_server_binary(name, env)) {
      return found;
    }
  }
  return Error{fmt::format("no llama.cpp RPC worker (ggml-rpc-server or rpc-server) on PATH; {}",
                           kHowToBuild),
               ExitCode::usage};
}

bool binds_everywhere(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "0:0:0:0:0:0:0:0";
}

Expected<std::vector<std::string>> worker_argv(const WorkerOptions& options) {
  if (binds_everywhere(options.bind.host) && !options.expose) {
    return Error{fmt::format("refusing to bind the RPC worker to {}: llama.cpp's RPC protocol has "
                             "no authentication, so anyone who reaches the port can use the "
                             "worker's memory and compute. Bind the address of the direct link "
                             "between the machines (e.g. --host 192.168.100.2), or pass --expose "
                             "if the network is yours alone",
                             options.bind.to_string()),
                 ExitCode::usage};
  }
  std::vector<std::string> argv{options.binary, "-H", options.bind.host, "-p",
                                std::to_string(options.bind.port)};
  if (options.threads > 0) {
    argv.insert(argv.end(), {"-t", std::to_string(options.threads)});
  }
  if (!options.devices.empty()) {
    argv.insert(argv.end(), {"-d", options.devices});
  }
  if (options.cache) {
    argv.push_back("-c");
  }
  return argv;
}

platform::Environment worker_environment(const platform::Environment& caller,
                                         std::vector<std::string>& removed) {
  platform::Environment env = caller;
  const std::string unified = "GGML_CUDA_ENABLE_UNIFIED_MEMORY";
  if (env.contains(unified)) {
    env.unset(unified);
    removed.push_back(unified);
  }
  return env;
}

bool worker_log_shows_client(std::string_view log_text) {
  const auto accepted = log_text.rfind("Accepted client connection");
  if (accepted == std::string_view::npos) {
    return false;
  }
  const auto closed = log_text.rfind("Client connection closed");
  return closed == std::string_view::npos || closed < accepted;
}

launch::StatePaths worker_state_paths(const std::filesystem::path& state_dir, int port) {
  const std::string stem = fmt::format("rpc-{}", port);
  return {state_dir / (stem + ".json"), state_dir / (stem + ".pid"), state_dir / (stem + ".lock"),
          state_dir / (stem + ".log")};
}

}  // namespace gb10tune::rpc
