// A stand-in for llama.cpp's ggml-rpc-server: takes its options (-H, -p, -c, -t, -d), speaks
// the RPC hello, device count and device memory like the real one, and records its argv and
// environment to $STANDIN_RPC_RECORD when set. STANDIN_RPC_VERSION=M.m.p changes the version
// it announces.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "support/fake_rpc_worker.hpp"

extern char** environ;

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  int port = 50052;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "-H" || arg == "--host") && i + 1 < argc) {
      host = argv[++i];
    } else if ((arg == "-p" || arg == "--port") && i + 1 < argc) {
      port = std::atoi(argv[++i]);
    } else if ((arg == "-t" || arg == "-d") && i + 1 < argc) {
      ++i;
    } else if (arg == "-c") {
    } else {
      std::fprintf(stderr, "error: unknown argument: %s\n", arg.c_str());
      return 1;
    }
  }
  if (const char* record = std::getenv("STANDIN_RPC_RECORD")) {
    std::ofstream out(record);
    for (int i = 0; i < argc; ++i) {
      out << "arg " << argv[i] << "\n";
    }
    for (char** env = environ; *env != nullptr; ++env) {
      out << "env " << *env << "\n";
    }
  }
  gb10tune::testing::WorkerConfig config;
  if (const char* version = std::getenv("STANDIN_RPC_VERSION")) {
    int major = 0, minor = 0, patch = 0;
    std::sscanf(version, "%d.%d.%d", &major, &minor, &patch);
    config.version = {static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(minor),
                      static_cast<std::uint8_t>(patch)};
  }
  config.devices = {{20ull << 30, 24ull << 30}};
  return gb10tune::testing::run_fake_rpc_worker_forever(config, host, port);
}
