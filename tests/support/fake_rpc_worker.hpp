// A stand-in for llama.cpp's rpc-server that speaks the same framing (HELLO, DEVICE_COUNT,
// GET_DEVICE_MEMORY), or misbehaves on purpose, serving one client at a time like the real one.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gb10tune/rpc/rpc_protocol.hpp"

namespace gb10tune::testing {

// How the stand-in answers.
enum class WorkerBehaviour {
  good,              // a correct worker of `version` with `devices`
  garbage,           // answers the hello with random bytes and a huge size
  close_mid_hello,   // sends half of the hello answer, then closes
  close_at_connect,  // accepts, then closes at once
  silent,            // accepts and reads, never answers
};

// What the stand-in is and does.
struct WorkerConfig {
  WorkerBehaviour behaviour = WorkerBehaviour::good;
  rpc::ProtocolVersion version = rpc::kKnownVersion;
  // One device, 8 GiB free of 16 (the fill constructor: GCC 12 at -O1 warns falsely on an
  // initializer list of aggregates here).
  std::vector<rpc::DeviceMemory> devices =
      std::vector<rpc::DeviceMemory>(1, rpc::DeviceMemory{8ull << 30, 16ull << 30});
  // Print rpc-server's "Accepted client connection" / "Client connection closed" on stdout.
  bool log_connections = false;
};

// Listens on host:port (port 0: any free port) in a thread of its own until destroyed.
class FakeRpcWorker {
 public:
  explicit FakeRpcWorker(WorkerConfig config, const std::string& host = "127.0.0.1", int port = 0);
  FakeRpcWorker(const FakeRpcWorker&) = delete;
  FakeRpcWorker& operator=(const FakeRpcWorker&) = delete;
  ~FakeRpcWorker();

  int port() const { return m_port; }
  // Connections accepted so far.
  int connections() const { return m_connections.load(); }

 private:
  void serve();
  void serve_client(int fd);

  WorkerConfig m_config;
  int m_listen_fd = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_connections{0};
  std::thread m_thread;
};

// Serves `config` on host:port in this thread until SIGTERM/SIGINT (the stand-in rpc-server
// executable). Returns a process exit code.
int run_fake_rpc_worker_forever(const WorkerConfig& config, const std::string& host, int port);

}  // namespace gb10tune::testing
