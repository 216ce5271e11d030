// The real binary against peers that never finish: a resolver that hangs and an HTTP server that
// drips its answer. Each command returns within its own deadline, with generous slack.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "support/hostile_peer.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

// The environment that makes getaddrinfo() of names under .slow.invalid hang for 30 s.
std::vector<std::string> slow_resolver_env(const TempDir& state) {
  const char* asan = std::getenv("ASAN_OPTIONS");
  return {"LD_PRELOAD=" GB10TUNE_SLOW_RESOLVER,
          // A sanitized binary refuses a preload ahead of its runtime unless told otherwise.
          std::string("ASAN_OPTIONS=") + (asan != nullptr ? std::string(asan) + ":" : "") +
              "verify_asan_link_order=0",
          "XDG_STATE_HOME=" + state.path().string()};
}

struct TimedRun {
  CliResult result;
  std::chrono::steady_clock::duration elapsed{};
};

TimedRun run_timed(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  const auto started = std::chrono::steady_clock::now();
  TimedRun run{run_binary(args, env), {}};
  run.elapsed = std::chrono::steady_clock::now() - started;
  return run;
}

// Runs `args` with the hanging resolver: the command must fail (exit 1) well within `bound`,
// naming the name it could not resolve within its deadline (`deadline`, in words).
void expect_lookup_cut_short(const std::vector<std::string>& args, std::chrono::seconds bound,
                             const std::string& name, const std::string& deadline) {
  TempDir state;
  const auto run = run_timed(args, slow_resolver_env(state));
  EXPECT_LT(run.elapsed, bound) << run.result.out;
  EXPECT_EQ(run.result.exit_code, 1) << run.result.out;
  EXPECT_TRUE(
      contains(run.result.out, "could not resolve the host name '" + name + "' within " + deadline))
      << run.result.out;
}

TEST(CliNetworkDeadlines, AHangingResolverCostsRpcStatusOnlyItsDeadline) {
  // rpc status asks for 2 s.
  expect_lookup_cut_short({"rpc", "status", "--host", "worker.slow.invalid", "--port", "50052"}, 8s,
                          "worker.slow.invalid", "2 s");
}

TEST(CliNetworkDeadlines, AHangingResolverCostsBenchServerOnlyItsDeadline) {
  // bench server's first question, /health, has 5 s.
  expect_lookup_cut_short({"bench", "server", "--url", "http://server.slow.invalid:8080"}, 12s,
                          "server.slow.invalid", "5 s");
}

TEST(CliNetworkDeadlines, AServerDrippingItsAnswerCostsBenchServerOnlyItsDeadline) {
  TempDir state;
  HostilePeer peer([](PeerConnection& c) {
    c.drip("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", 800ms);
  });
  const auto run = run_timed({"bench", "server", "--url", peer.url()},
                             {"XDG_STATE_HOME=" + state.path().string()});
  EXPECT_LT(run.elapsed, 12s) << run.result.out;
  EXPECT_EQ(run.result.exit_code, 1) << run.result.out;
  EXPECT_TRUE(contains(run.result.out, "no complete answer from " + peer.url() + "/health"))
      << run.result.out;
}

}  // namespace
}  // namespace gb10tune::testing
