// Typed views of llama-server's answers (/health, /props, /slots, completion timings),
// parsed from the JSON text. Pure functions: no I/O. Fields that older builds do not send
// are optional, never errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/http/http_client.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::http {

// What /health says about the server.
enum class HealthState {
  ready,    // 200: the model is loaded
  loading,  // 503 "Loading model" (unavailable_error)
  error,    // anything else: a server error, another program, a proxy page
};

// Classifies a /health answer (status first, then the error body of a 503). Never fails.
HealthState classify_health(const http::HttpResponse& response);

// The parts of /props that launch, verify and bench rely on.
struct ServerProps {
  std::uint64_t n_ctx_per_slot = 0;  // default_generation_settings.n_ctx
  std::uint32_t total_slots = 0;
  std::string model_path;
  std::string build_info;  // "b1234-abcdef0"; empty when not sent
  std::optional<std::string> model_alias;
  // default_generation_settings.params: the defaults of a request, not the server's settings.
  // The 2026-08 build (3f545be) shows "speculative.types" "none" whatever --spec-type says;
  // the 2025-02 build (c392e50) shows "speculative.n_max" (16) with or without a draft model.
  // What the server runs is in /slots (`speculative`).
  std::optional<std::string> speculative_types;
  std::optional<std::int64_t> speculative_n_max;
  std::optional<bool> is_sleeping;
  std::optional<bool> endpoint_metrics;
};

// Parses the body of GET /props. An Error naming the field when the text is not JSON, or
// default_generation_settings.n_ctx, total_slots or model_path is missing or mistyped.
Expected<ServerProps> parse_props(std::string_view json);

// One entry of GET /slots.
struct SlotInfo {
  int id = 0;
  std::uint64_t n_ctx = 0;
  std::optional<bool> speculative;  // the slot has a draft context (what the server runs)
  bool is_processing = false;
};

// Parses the body of GET /slots (a JSON array). An Error when it is not an array of objects
// with `id`, `n_ctx` and `is_processing`; a 501 error object gets its own hint.
Expected<std::vector<SlotInfo>> parse_slots(std::string_view json);

// The `timings` object of a completion answer (see K18).
struct Timings {
  double prompt_n = 0;
  double prompt_ms = 0;
  double prompt_per_second = 0;
  double predicted_n = 0;
  double predicted_ms = 0;
  double predicted_per_second = 0;
  std::optional<double> cache_n;
  std::optional<double> draft_n;           // only when drafting happened
  std::optional<double> draft_n_accepted;  // only when drafting happened
};

// Parses the `timings` object of a /completion or /v1/chat/completions answer. An Error when
// the text is not JSON, has no `timings` object ("is this llama-server?"), or lacks one of the
// six prompt/predicted fields.
Expected<Timings> parse_completion_timings(std::string_view json);

// Parses the answer of POST /apply-template: the prompt the server builds from a chat request
// ({"prompt": "..."}). An Error when it is not JSON or has no "prompt" string.
Expected<std::string> parse_applied_template(std::string_view json);

// Parses the answer of POST /tokenize: how many tokens ({"tokens": [ids or {id, piece}]}). An
// Error when it is not JSON or has no "tokens" array.
Expected<std::size_t> parse_token_count(std::string_view json);

}  // namespace gb10tune::http
