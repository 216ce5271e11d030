// What launch adds on top of llama-server's own start (issue 5), measured against the stand-in
// llama-server (load time 0), which records CLOCK_REALTIME at main() entry and when its /health
// turned 200:
//   BM_LaunchBinary   the real `gb10tune launch` (model header, plan, the server's --help, the
//                     clean environment, the lock, the start):
//     overhead_ms          gb10tune started → the server's main() entered
//     health_to_return_ms  /health turned 200 → gb10tune exited
//   BM_StartServer    start_server alone (the process side): the same two figures
//   BM_Gb10tuneProcess  `gb10tune stop` with nothing to stop: the cost of starting the tool
// Aims: overhead < 50 ms, health → return < 250 ms.
// Run: build/bench/launch_bench
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "free_port.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/process.hpp"
#include "gb10tune/util/text_file.hpp"
#include "support/test_models.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::int64_t realtime_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

nlohmann::json read_json(const fs::path& path) {
  return nlohmann::json::parse(gb10tune::read_text_file(path).value_or(""), nullptr, false);
}

// The stand-in rewrites its record just after /health turns 200: waits for that version.
nlohmann::json read_ready_record(const fs::path& path) {
  auto record = read_json(path);
  for (int i = 0; i < 200 && !record.contains("ready_realtime_ns"); ++i) {
    std::this_thread::sleep_for(5ms);
    record = read_json(path);
  }
  return record;
}

// The two delays reported, from the stand-in's record: the start call to the server's main(),
// and /health turning 200 to the call's return; mean and worst over the iterations.
class Latencies {
 public:
  void add(const fs::path& record_file, std::int64_t called_ns, std::int64_t returned_ns) {
    const auto record = read_ready_record(record_file);
    const double overhead =
        static_cast<double>(record.value("main_realtime_ns", std::int64_t{0}) - called_ns) / 1e6;
    const double health =
        static_cast<double>(returned_ns - record.value("ready_realtime_ns", std::int64_t{0})) / 1e6;
    m_overhead_ms += overhead;
    m_health_ms += health;
    m_worst_overhead_ms = std::max(m_worst_overhead_ms, overhead);
    m_worst_health_ms = std::max(m_worst_health_ms, health);
  }

  void report(benchmark::State& state) const {
    const auto n = static_cast<double>(state.iterations());
    state.counters["overhead_ms"] = m_overhead_ms / n;
    state.counters["overhead_max_ms"] = m_worst_overhead_ms;
    state.counters["health_to_return_ms"] = m_health_ms / n;
    state.counters["health_to_return_max_ms"] = m_worst_health_ms;
  }

 private:
  double m_overhead_ms = 0;
  double m_health_ms = 0;
  double m_worst_overhead_ms = 0;
  double m_worst_health_ms = 0;
};

class TempState {
 public:
  TempState() {
    m_dir = fs::temp_directory_path() / ("gb10tune-launch-bench-" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
  }
  ~TempState() {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  const fs::path& dir() const { return m_dir; }

 private:
  fs::path m_dir;
};

void BM_LaunchBinary(benchmark::State& state) {
  TempState temp;
  const fs::path model = temp.dir() / "model.gguf";
  gb10tune::testing::report_model().write(model);
  const fs::path record_file = temp.dir() / "standin.json";
  ::setenv("XDG_STATE_HOME", (temp.dir() / "state").c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (temp.dir() / "config").c_str(), 1);
  ::setenv("STANDIN_LOAD_MS", "0", 1);
  ::setenv("STANDIN_RECORD", record_file.c_str(), 1);
  const auto paths = gb10tune::launch::StatePaths::under(temp.dir() / "state" / "gb10tune");
  Latencies latencies;
  for (auto _ : state) {
    std::error_code ec;
    fs::remove(record_file, ec);
    const std::vector<std::string> argv = {
        GB10TUNE_BINARY,  "launch",
        "--model",        model.string(),
        "--llama-server", GB10TUNE_STAND_IN_SERVER,
        "--profile",      "single-slot",
        "--ctx-per-slot", "4096",
        "--port",         std::to_string(gb10tune::bench_support::free_loopback_port()),
        "--reserve",      "0",
        "--overhead",     "0",
        "--cache-ram",    "0"};
    const std::int64_t called = realtime_ns();
    const auto run = gb10tune::platform::run_capture(argv, 60s);
    const std::int64_t returned = realtime_ns();

    state.PauseTiming();
    if (!run || run->exit_status != 0) {
      state.SkipWithError(run ? run->output.c_str() : run.error().message.c_str());
      break;
    }
    latencies.add(record_file, called, returned);
    (void)gb10tune::launch::stop_server(gb10tune::platform::Sysroot(), paths, 5s);
    state.ResumeTiming();
  }
  for (const char* name :
       {"XDG_STATE_HOME", "XDG_CONFIG_HOME", "STANDIN_LOAD_MS", "STANDIN_RECORD"}) {
    ::unsetenv(name);
  }
  latencies.report(state);
}
BENCHMARK(BM_LaunchBinary)->Iterations(20)->Unit(benchmark::kMillisecond);

void BM_StartServer(benchmark::State& state) {
  TempState temp;
  const auto paths = gb10tune::launch::StatePaths::under(temp.dir() / "state");
  const fs::path record_file = temp.dir() / "standin.json";
  Latencies latencies;
  for (auto _ : state) {
    std::error_code ec;
    fs::remove(record_file, ec);
    const int port = gb10tune::bench_support::free_loopback_port();
    gb10tune::launch::StartRequest request;
    request.argv = {GB10TUNE_STAND_IN_SERVER, "--port", std::to_string(port)};
    request.env = gb10tune::platform::Environment::current();
    request.env.set("STANDIN_LOAD_MS", "0");
    request.env.set("STANDIN_RECORD", record_file.string());
    request.paths = paths;
    request.url = gb10tune::http::Url{"http", "127.0.0.1", port, ""};
    const std::atomic<bool> never{false};

    const std::int64_t called = realtime_ns();
    const auto started = gb10tune::launch::start_server(request, {}, never);
    const std::int64_t returned = realtime_ns();

    state.PauseTiming();
    if (!started) {
      state.SkipWithError(started.error().message.c_str());
      break;
    }
    latencies.add(record_file, called, returned);
    (void)gb10tune::launch::stop_server(gb10tune::platform::Sysroot(), paths, 5s);
    int status = 0;
    ::waitpid(started->pid, &status, 0);
    state.ResumeTiming();
  }
  latencies.report(state);
}
BENCHMARK(BM_StartServer)->Iterations(30)->Unit(benchmark::kMillisecond);

void BM_Gb10tuneProcess(benchmark::State& state) {
  TempState temp;
  ::setenv("XDG_STATE_HOME", temp.dir().c_str(), 1);
  double total_ms = 0;
  for (auto _ : state) {
    const auto begin = std::chrono::steady_clock::now();
    const auto run = gb10tune::platform::run_capture({GB10TUNE_BINARY, "stop"}, 10s);
    total_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    if (!run || run->exit_status != 0) {
      state.SkipWithError("gb10tune stop failed");
      break;
    }
  }
  state.counters["gb10tune_process_ms"] = total_ms / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Gb10tuneProcess)->Iterations(30)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
