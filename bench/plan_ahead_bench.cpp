// How long `gb10tune plan URL` takes for a 10-shard split model served over loopback HTTP with
// range requests: every shard's header (the first with a 150k-token vocabulary), the model
// facts, and the what-fits table for GB10 (4 slots × f16 and q8_0, and launch's own choice),
// in process; and the same for gb10x2 (two GB10s over RPC). The budget (issue 26): well under
// a second. Counters: the bytes read from the
// server per plan, and the requests.
// Run: build/bench/plan_ahead_bench
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "gb10tune/launch/plan_model.hpp"
#include "gb10tune/launch/target_machine.hpp"
#include "gb10tune/launch/what_fits.hpp"
#include "gb10tune/server/known_build.hpp"
#include "support/range_peer.hpp"
#include "support/split_models.hpp"

namespace {

using namespace gb10tune;
using namespace std::chrono_literals;

// The shards on disk (removed at exit) and the server, made once.
struct SplitServer {
  SplitServer()
      : dir(std::filesystem::temp_directory_path() /
            ("gb10tune-plan-ahead-bench-" + std::to_string(::getpid()))),
        log(std::make_shared<testing::PeerLog>()) {
    std::filesystem::create_directories(dir);
    std::map<std::string, std::filesystem::path> served;
    for (const auto& shard : testing::write_split_report_model(dir, "big", 10)) {
      served["/m/" + shard.filename().string()] = shard;
    }
    peer = std::make_unique<testing::HostilePeer>(testing::ranged_files(served, log));
  }
  ~SplitServer() {
    peer.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::filesystem::path dir;
  std::shared_ptr<testing::PeerLog> log;
  std::unique_ptr<testing::HostilePeer> peer;
};

// Reads the 10 shards and plans them for `machine` (gb10, or gb10x2 with its worker's answer).
void plan_ten_shards(benchmark::State& state, const launch::TargetMachine& machine) {
  static SplitServer server;
  const std::string url = server.peer->url() + "/m/big-00001-of-00010.gguf";
  const bool pair = machine.nodes > 1;
  launch::LaunchRequest request;
  std::uint64_t read = 0;
  // The server's log counts every run's requests (the server is made once for all runs).
  const auto requests_before = server.log->requests.load();
  for (auto _ : state) {
    http::RemoteOptions options;
    options.limits.deadline = std::chrono::steady_clock::now() + 30s;
    auto model = launch::read_plan_model(url, options);
    if (!model) {
      state.SkipWithError(model.error().message.c_str());
      return;
    }
    launch::PlanStandIns stand_ins{
        model->candidate, model->facts,
        launch::PlanStandIns::Build{
            pair ? server::assumed_rpc_build_flags() : server::assumed_build_flags(),
            "assumed",
            {true, "bench"}},
        std::nullopt};
    if (pair) {
      stand_ins.workers = launch::described_workers(machine);
      request.rpc = stand_ins.workers->front().endpoint.to_string();
    }
    launch::PlannerContext context;
    context.sysroot = launch::machine_sysroot(machine);
    context.note = [](launch::NoteKind, const std::string&) {};
    context.stand_ins = &stand_ins;
    auto fits = launch::plan_what_fits(request, context, machine, 4);
    if (!fits) {
      state.SkipWithError(fits.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(fits->rows);
    read = model->total_read();
  }
  state.counters["bytes_read"] = static_cast<double>(read);
  state.counters["requests_per_plan"] =
      static_cast<double>(server.log->requests.load() - requests_before) /
      static_cast<double>(state.iterations());
}
void BM_PlanTenShardsOverHttp(benchmark::State& state) {
  plan_ten_shards(state, launch::gb10_machine());
}
BENCHMARK(BM_PlanTenShardsOverHttp)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same for gb10x2: every cell of the table is a binary search over whole launch plans.
void BM_PlanTenShardsOverHttpForGb10x2(benchmark::State& state) {
  auto machine = launch::find_target_machine("gb10x2", platform::Sysroot(), {});
  plan_ten_shards(state, *machine);
}
BENCHMARK(BM_PlanTenShardsOverHttpForGb10x2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
