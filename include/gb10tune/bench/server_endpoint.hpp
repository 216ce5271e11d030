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
#include "gb10tune/bench/workload.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::bench {

// What /props and /slots say about the server.
struct ServerInfo {
  std::string model_path;
  std::string build_info;
  std::uint32_t total_slots = 0;
  std::uint64_t n_ctx_per_slot = 0;
  // From /slots: how many slots said whether they have a draft context, and how many do.
  // slots_reported is 0 when /slots is off (--no-slots) or the build does not say.
  std::size_t slots_reported = 0;
  std::size_t slots_speculative = 0;
  nlohmann::json props;  // the whole /props answer, for the provenance and the settings
};

// A connected server: its facts, one completion at a time (thread-safe), and its count of a
// request's prompt tokens (empty: this endpoint cannot count; the sizes are then estimated).
struct ServerEndpoint {
  std::function<Expected<ServerInfo>()> info;
  CompletionFn complete;
  PromptTokenCounter count_prompt;
};

// Connects to the server at `url` ("http://127.0.0.1:8080"), completions bounded by
// `timeout`; an Error (ExitCode::usage) when the URL is malformed. Nothing is sent until
// info() or complete() is called.
using ServerConnector = std::function<Expected<ServerEndpoint>(const std::string& url,
                                                               std::chrono::milliseconds timeout)>;

// The HTTP ServerConnector: GET /health, /props and /slots, POST /v1/chat/completions. info() fails
// (ExitCode::failed) naming the URL when nothing answers, when the server is still loading (503) or
// answers with an error. count_prompt() sends the request body to POST /apply-template (the
// prompt the server builds for a chat completion) and that prompt to POST /tokenize with
// "add_special": true (as a completion tokenizes it); an Error naming the endpoint and its answer
// when either fails (an older build without them answers 404).
Expected<ServerEndpoint> connect_http(const std::string& url, std::chrono::milliseconds timeout);

}  // namespace gb10tune::bench
