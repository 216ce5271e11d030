// What verify asks a running llama-server over HTTP, behind an interface so that the checks
// run against a fake in tests and the HTTP client stays in one file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::verify {

// The answer of GET /health (K18: 503 while loading, then 200).
enum class HealthState { ready, loading, error, no_answer };

struct HealthAnswer {
  HealthState state = HealthState::no_answer;
  int status = 0;      // the HTTP status, 0 without an answer
  std::string detail;  // the error body, or why there was no answer
};

// The parts of GET /props verify compares with the flags.
struct PropsAnswer {
  std::uint64_t n_ctx_per_slot = 0;
  std::uint32_t total_slots = 0;
  std::string model_path;
  std::string build_info;
  // params["speculative.types"] of default_generation_settings. The 2026-08 build (3f545be)
  // shows the per-request default there ("none" whatever the server runs), so this is shown
  // as evidence and never taken as the server's setting; nullopt when the build does not send it.
  std::optional<std::string> request_spec_types;
};

// One entry of GET /slots.
struct SlotAnswer {
  int id = 0;
  std::uint64_t n_ctx = 0;
  std::optional<bool> speculative;
  bool is_processing = false;
};

// The `timings` of one chat completion (K18).
struct SmokeTimings {
  double prompt_n = 0;
  double prompt_per_second = 0;
  double predicted_n = 0;
  double predicted_per_second = 0;
  std::optional<double> draft_n;
  std::optional<double> draft_n_accepted;
};

// One server at one URL. Every call has its own short timeout; none throws.
class ServerProbe {
 public:
  virtual ~ServerProbe() = default;
  virtual HealthAnswer health() = 0;
  // An Error when the endpoint does not answer 200 with the expected JSON.
  virtual Expected<PropsAnswer> props() = 0;
  // An Error when the endpoint does not answer (it is off with --no-slots) or is malformed.
  virtual Expected<std::vector<SlotAnswer>> slots() = 0;
  // One short chat completion; an Error when it fails or carries no timings.
  virtual Expected<SmokeTimings> smoke() = 0;
};

// Parses a GET /props body into what verify compares (http::parse_props' errors).
Expected<PropsAnswer> read_props_answer(std::string_view body);

// Parses a GET /slots body into its slots (http::parse_slots' errors).
Expected<std::vector<SlotAnswer>> read_slots_answer(std::string_view body);

}  // namespace gb10tune::verify
