// A stand-in for a running llama-server behind the bench::ServerEndpoint seam: answers each
// completion with configurable timings (draft counts included) after a configurable delay,
// records what it was sent, and can refuse to answer.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "gb10tune/bench/server_endpoint.hpp"

namespace gb10tune::testing {

class FakeServer {
 public:
  // Timings for the n-th completion (0-based, in arrival order) of the request whose last
  // user message is `last_user`. Default: decode 20 t/s, prefill 300 t/s, no drafting.
  std::function<bench::ServerTimings(int n, const std::string& last_user)> timings;
  std::chrono::milliseconds delay{0};  // per completion, to make sessions overlap
  std::string refuse;                  // non-empty: every call fails with this message
  int fail_at = -1;                    // the n-th completion fails (n >= 0)
  bench::ServerInfo info;              // what /props says
  // The server's prompt token counts (/apply-template and /tokenize); empty: it has none, as
  // an older build (the sizes are then estimated).
  bench::PromptTokenCounter count_prompt;

  // A connector for cli::Context / the run loop.
  bench::ServerConnector connector();
  // One completion (what connector()'s endpoint calls).
  Expected<bench::CompletionReply> complete(const std::string& request_json);

  std::vector<std::string> urls;      // every URL connected to
  std::vector<std::string> requests;  // every request body, in arrival order
  int max_in_flight = 0;              // the most completions that ran at once

 private:
  std::mutex m_mutex;
  int m_in_flight = 0;
};

// Timings as a llama-server reports them for `prompt_n` prompt tokens at `prefill_tps` and
// `predicted_n` tokens at `decode_tps` (ms fields consistent with the rates).
bench::ServerTimings make_timings(double prompt_n, double prefill_tps, double predicted_n,
                                  double decode_tps);

}  // namespace gb10tune::testing
