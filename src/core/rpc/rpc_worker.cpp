// Finding, commanding and filing the rpc-server worker.
#include "gb10tune/rpc/rpc_worker.hpp"

#include <fmt/format.h>

#include "gb10tune/launch/server_binary.hpp"
#include "gb10tune/util/host_port.hpp"

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

Expected<std::vector<std::string>> worker_argv(const WorkerOptions& options) {
  const std::string_view host = bare_host(options.bind.host);
  if (binds_every_interface(host) && !options.expose) {
    return Error{fmt::format("refusing to bind the RPC worker to {} (every interface): llama.cpp's "
                             "RPC protocol has no authentication, so anyone who reaches the port "
                             "can use the worker's memory and compute. Bind the address of the "
                             "direct link between the machines (e.g. --host 192.168.100.2), or "
                             "pass --expose if the network is yours alone",
                             format_host_port(host, options.bind.port)),
                 ExitCode::usage};
  }
  if (classify_host(host, AddressReader::inet_addr) == HostKind::invalid) {
    return Error{fmt::format("rpc-server cannot bind '{}': it reads -H as an IPv4 address "
                             "(inet_addr), so no IPv6 and no host names; give the IPv4 address of "
                             "the direct link between the machines (e.g. --host 192.168.100.2), "
                             "or 127.0.0.1 for this machine only",
                             options.bind.host),
                 ExitCode::usage};
  }
  std::vector<std::string> argv{options.binary, "-H", std::string(host), "-p",
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
