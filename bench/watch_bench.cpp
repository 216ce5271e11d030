// What `gb10tune watch` costs the machine it guards (issue 14): it runs for months beside the
// server, so its own CPU and memory must be negligible.
//   BM_WatchSample         one sample in-process (MemAvailable, the server's stat and status)
//                          of a live process: cpu_us per sample, cpu_s_per_hour at 1 Hz
//   BM_WatchPolicy         the decision core on one sample
//   BM_WatchNvmlSession    the NVML per-process figure (/0) and every GPU's sensors (/1) with
//                          the library kept loaded (skipped without NVML), and
//                          BM_WatchNvmlReload with a load/init/unload per call (what
//                          query_nvml does): why the watch keeps a session
//   BM_WatchBinary         the real `gb10tune watch` guarding the stand-in llama-server, run
//                          for 1 and for 1+N samples 10 ms apart: its CPU per sample from the
//                          difference
//                          (user + system, from wait4), CPU seconds per hour at 1 Hz, and its
//                          peak RSS
// Run: build/bench/watch_bench (GB10TUNE_BENCH_BINARY and GB10TUNE_BENCH_STAND_IN override the
// paths of gb10tune and the stand-in built beside it, for a copy run on another machine)
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "free_port.hpp"
#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/nvml.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/watch/watch_policy.hpp"
#include "gb10tune/watch/watch_sampler.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace gb10tune;

// `fallback`, unless the environment variable `name` names another path.
std::string bench_path(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : std::string(fallback);
}

double cpu_seconds(const rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return cpu_seconds(usage);
}

void BM_WatchSample(benchmark::State& state) {
  const platform::Sysroot live;
  const int self = static_cast<int>(::getpid());
  const auto stat = sys::read_process_stat(live, self);
  const watch::Sampler sampler(live, watch::meminfo_from(live), {});
  const watch::WatchedProcess process{self, stat ? stat->start_time_ticks : 0};
  const double cpu_before = process_cpu_seconds();
  for (auto _ : state) {
    auto sample = sampler.take(0, process);
    benchmark::DoNotOptimize(sample);
  }
  const double per_sample =
      (process_cpu_seconds() - cpu_before) / static_cast<double>(state.iterations());
  state.counters["cpu_us"] = per_sample * 1e6;
  state.counters["cpu_s_per_hour"] = per_sample * 3600;
}
BENCHMARK(BM_WatchSample);

void BM_WatchPolicy(benchmark::State& state) {
  watch::WatchPolicy policy({12ull << 30, 6ull << 30, 1ull << 30}, {});
  watch::Sample sample;
  sample.server_running = true;
  sample.server_rss_bytes = 20ull << 30;
  std::uint64_t i = 0;
  for (auto _ : state) {
    sample.t_s = static_cast<double>(i);
    sample.available_bytes = (11ull << 30) + ((i++ % 4) << 29);  // hovering at the warning
    auto events = policy.observe(sample);
    benchmark::DoNotOptimize(events);
  }
}
BENCHMARK(BM_WatchPolicy);

void BM_WatchNvmlSession(benchmark::State& state) {
  const platform::NvmlSession session;
  if (!session.usable()) {
    state.SkipWithError("NVML not usable on this machine");
    return;
  }
  const auto self = static_cast<std::uint32_t>(::getpid());
  const double cpu_before = process_cpu_seconds();
  for (auto _ : state) {
    if (state.range(0) == 0) {
      auto bytes = session.process_bytes(self);
      benchmark::DoNotOptimize(bytes);
    } else {
      auto readings = session.readings();
      benchmark::DoNotOptimize(readings);
    }
  }
  const double per_call =
      (process_cpu_seconds() - cpu_before) / static_cast<double>(state.iterations());
  state.counters["cpu_us"] = per_call * 1e6;
  state.counters["cpu_s_per_hour"] = per_call * 3600;
}
BENCHMARK(BM_WatchNvmlSession)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_WatchNvmlReload(benchmark::State& state) {
  if (!platform::query_nvml().loaded) {
    state.SkipWithError("NVML not usable on this machine");
    return;
  }
  for (auto _ : state) {
    auto report = platform::query_nvml();
    benchmark::DoNotOptimize(report);
  }
}
BENCHMARK(BM_WatchNvmlReload)->Unit(benchmark::kMillisecond)->Iterations(20);

// Runs `gb10tune watch` with `args` to its end; its rusage, and its exit code in `code`.
rusage run_watch(const std::vector<std::string>& args, int& code) {
  std::vector<std::string> words = {bench_path("GB10TUNE_BENCH_BINARY", GB10TUNE_BINARY), "watch"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& word : words) {
    argv.push_back(word.data());
  }
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  rusage usage{};
  code = -1;
  if (::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    ::wait4(pid, &status, 0, &usage);
    code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  return usage;
}

void BM_WatchBinary(benchmark::State& state) {
  const fs::path dir =
      fs::temp_directory_path() / ("gb10tune-watch-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ::setenv("XDG_STATE_HOME", dir.c_str(), 1);
  const launch::StatePaths paths = launch::StatePaths::under(dir / "gb10tune");
  const int port = gb10tune::bench_support::free_loopback_port();
  launch::StartRequest request;
  request.argv = {bench_path("GB10TUNE_BENCH_STAND_IN", GB10TUNE_STAND_IN_SERVER), "--port",
                  std::to_string(port)};
  request.env = platform::Environment::current();
  request.env.set("STANDIN_LOAD_MS", "0");
  request.paths = paths;
  request.url = http::Url{"http", "127.0.0.1", port, ""};
  const std::atomic<bool> never{false};
  const auto started = launch::start_server(request, {}, never);
  if (!started) {
    state.SkipWithError(started.error().message.c_str());
    return;
  }
  const std::int64_t samples = state.range(0);
  double per_sample = 0;
  long max_rss_kib = 0;
  for (auto _ : state) {
    int code_one = 0;
    int code_many = 0;
    const rusage one = run_watch({"--interval", "0.01", "--max-samples", "1"}, code_one);
    const rusage many =
        run_watch({"--interval", "0.01", "--max-samples", std::to_string(samples + 1)}, code_many);
    if (code_one != 0 || code_many != 0) {
      state.SkipWithError("gb10tune watch did not exit 0");
      break;
    }
    per_sample = (cpu_seconds(many) - cpu_seconds(one)) / static_cast<double>(samples);
    max_rss_kib = std::max(many.ru_maxrss, one.ru_maxrss);
  }
  state.counters["cpu_us_per_sample"] = per_sample * 1e6;
  state.counters["cpu_s_per_hour_at_1hz"] = per_sample * 3600;
  state.counters["max_rss_MiB"] = static_cast<double>(max_rss_kib) / 1024.0;
  (void)launch::stop_server(platform::Sysroot(), paths, std::chrono::seconds(5));
  int status = 0;
  ::waitpid(started->pid, &status, 0);
  fs::remove_all(dir);
}
BENCHMARK(BM_WatchBinary)->Arg(300)->Iterations(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
