// The network seam of `bench server`: what the benchmark needs from a running llama-server.
// The product connects over HTTP (connect_http); tests pass a fake.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gb10tune/bench/server_run.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::bench {

// What /props says about the server.
struct ServerInfo {
  std::string model_path;
  std::string build_info;
  std::uint32_t total_slots = 0;
  std::uint64_t n_ctx_per_slot = 0;
  std::optional<bool> speculative;
  nlohmann::json props;  // the whole answer, for the provenance and the settings
};

// A connected server: its facts and one completion at a time (thread-safe).
struct ServerEndpoint {
  std::function<Expected<ServerInfo>()> info;
  CompletionFn complete;
};

// Connects to the server at `url` ("http://127.0.0.1:8080"), completions bounded by
// `timeout`; an Error (ExitCode::usage) when the URL is malformed. Nothing is sent until
// info() or complete() is called.
using ServerConnector = std::function<Expected<ServerEndpoint>(const std::string& url,
                                                               std::chrono::milliseconds timeout)>;

// The HTTP ServerConnector: GET /health and /props, POST /v1/chat/completions. info() fails
// (ExitCode::failed) naming the URL when nothing answers, when the server is still loading (503) or
// answers with an error.
Expected<ServerEndpoint> connect_http(const std::string& url, std::chrono::milliseconds timeout);

}  // namespace gb10tune::bench
