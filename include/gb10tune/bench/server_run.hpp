// Running the workload against a server: warm-up, then measured rounds at each concurrency
// level (K10), through a completion function so that the loop runs against a fake in tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gb10tune/bench/server_metrics.hpp"
#include "gb10tune/bench/workload.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::bench {

// What one completion returned.
struct CompletionReply {
  ServerTimings timings;
  double client_seconds = 0;  // the HTTP exchange as the client saw it
};

// Sends one chat-completion request (a JSON body) and returns the server's timings; an Error
// names the server and what failed. Called from several threads at once at concurrency > 1.
using CompletionFn = std::function<Expected<CompletionReply>(const std::string& request_json)>;

// Seconds on a monotonic clock (for the client-timed wall time of a level).
using ClockFn = std::function<double()>;

// Called after each round: its concurrency, index (from 1, warm-up rounds included), the
// number of rounds, whether it was warm-up, and its completions.
using RoundProgress = std::function<void(int concurrency, int round, int rounds, bool warmup,
                                         const std::vector<RequestSample>& samples)>;

struct ServerRunOptions {
  std::vector<int> concurrency{1};  // levels, each >= 1, run in this order
  int samples = 0;                  // measured rounds per level; 0 = one per workload request
  int warmup = 1;                   // rounds per level run first and discarded
};

// One concurrency level. In a round, `concurrency` sessions each send one request at the
// same moment and the round ends when all have answered. Session s walks the workload from
// request s × size / concurrency on, so that parallel sessions hold different conversations.
struct LevelResult {
  int concurrency = 1;
  std::vector<RequestSample> samples;  // measured completions, round by round
  // Per round, the sum of the sessions' server-reported decode rates: the total decode rate
  // of the level as the server saw it (K10's "total").
  std::vector<double> round_totals;
  double wall_seconds = 0;             // client-timed: the measured rounds, start to end
  std::uint64_t generated_tokens = 0;  // sum of predicted_n of the measured completions
};

struct ServerRunInputs {
  const Workload* workload = nullptr;
  ServerRunOptions options;
  CompletionFn complete;
  ClockFn clock;
  RoundProgress progress;                     // may be empty
  const std::atomic<bool>* cancel = nullptr;  // checked between rounds
};

// The request a session sends in a round (exposed for tests): index into the workload.
std::size_t request_index(std::size_t workload_size, int concurrency, int session, int step);

// Runs every level. The first failed completion ends the run with its Error (ExitCode::failed,
// naming the request, session and level); a set cancel flag ends it with
// ExitCode::interrupted. A bad option (no levels, a level < 1, samples < 0, warmup < 0) is
// an ExitCode::usage Error.
Expected<std::vector<LevelResult>> run_server_bench(const ServerRunInputs& inputs);

}  // namespace gb10tune::bench
