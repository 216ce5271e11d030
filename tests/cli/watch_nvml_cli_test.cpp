// `gb10tune watch` as the real binary with the tests' stand-in NVML (GB10TUNE_NVML_LIBRARY)
// beside the stand-in llama-server: each GPU's temperature, power and memory reach /metrics in
// base units with a gpu label (parsed by the Prometheus client's own parser) and the JSON
// lines; a figure NVML does not support, or a library without the sensor calls, leaves the
// figure out instead of writing 0.
#include <gtest/gtest.h>

#include "gb10tune/launch/server_process.hpp"
#include "support/background_run.hpp"
#include "support/prometheus_scrape.hpp"
#include "support/stand_in.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

// The stand-in NVML `library` with two GPUs: an H200 that reports everything, and a GB10 with
// its temperature only (NOT_SUPPORTED for the rest); the server `pid` holds 3 GiB on the H200.
std::map<std::string, std::string> fake_nvml_env(const char* library, int pid) {
  return {{"GB10TUNE_NVML_LIBRARY", library},
          {"FAKE_NVML_DEVICES", "2"},
          {"FAKE_NVML_NAMES", "NVIDIA H200,NVIDIA GB10"},
          {"FAKE_NVML_TEMPERATURE", "61,48"},
          {"FAKE_NVML_POWER_MW", "123456,-"},
          {"FAKE_NVML_POWER_LIMIT_MW", "700000,-"},
          {"FAKE_NVML_MEMORY", "1073741824:150754820096,-"},
          {"FAKE_NVML_RESERVED", "644874240,-"},  // left out of "used", as nvidia-smi does
          {"FAKE_NVML_PROCESS", fmt::format("{}:3221225472", pid)}};
}

// The stand-in llama-server started through launch, with a state directory of its own; stopped
// at the end.
struct NvmlWatchedServer {
  TempDir dir;
  ScopedEnv state{"XDG_STATE_HOME", dir.path().string()};
  launch::StatePaths paths = launch::StatePaths::under(dir.path() / "gb10tune");
  int pid = start_stand_in_through_launch(paths);
  NvmlWatchedServer() = default;
  NvmlWatchedServer(const NvmlWatchedServer&) = delete;
  NvmlWatchedServer& operator=(const NvmlWatchedServer&) = delete;
  ~NvmlWatchedServer() { (void)launch::stop_server(platform::Sysroot(), paths, 2s); }
};

// Runs watch --metrics with `env` against the running stand-in and scrapes it once the
// server's GPU figure is there.
std::map<std::string, double> scrape_watch_with(const std::map<std::string, std::string>& env,
                                                std::string& error) {
  const int port = free_tcp_port();
  BackgroundRun watch({"watch", "--metrics", std::to_string(port), "--interval", "0.2"}, env);
  return scrape_prometheus(fmt::format("http://127.0.0.1:{}/metrics", port),
                           "gb10tune_watch_server_gpu_bytes", error);
}

// Whether any sample's key holds `part`.
bool any_key_holds(const std::map<std::string, double>& values, const std::string& part) {
  for (const auto& [key, value] : values) {
    if (key.find(part) != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST(CliWatchNvml, EachGpuIsExportedInBaseUnitsAndUnsupportedIsLeftOut) {
  const NvmlWatchedServer server;
  ASSERT_NE(server.pid, 0);
  std::string error;
  const auto values = scrape_watch_with(fake_nvml_env(GB10TUNE_FAKE_NVML, server.pid), error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(values.at("gb10tune_watch_server_gpu_bytes"), 3221225472.0);
  EXPECT_EQ(values.at(R"(gb10tune_watch_gpu_info{gpu="0",name="NVIDIA H200"})"), 1);
  EXPECT_EQ(values.at(R"(gb10tune_watch_gpu_info{gpu="1",name="NVIDIA GB10"})"), 1);
  EXPECT_EQ(values.at(R"(gb10tune_watch_gpu_temperature_celsius{gpu="0"})"), 61);
  EXPECT_EQ(values.at(R"(gb10tune_watch_gpu_temperature_celsius{gpu="1"})"), 48);
  EXPECT_EQ(values.at(R"(gb10tune_watch_gpu_power_watts{gpu="0"})"), 123.456);
  EXPECT_EQ(values.at(R"(gb10tune_watch_gpu_power_limit_watts{gpu="0"})"), 700);
  EXPECT_EQ(values.at(R"(gb10tune_watch_gpu_memory_used_bytes{gpu="0"})"), 1073741824.0);
  EXPECT_EQ(values.at(R"(gb10tune_watch_gpu_memory_total_bytes{gpu="0"})"), 150754820096.0);
  // The GB10's NOT_SUPPORTED figures are absent, not 0.
  EXPECT_EQ(values.count(R"(gb10tune_watch_gpu_power_watts{gpu="1"})"), 0U);
  EXPECT_EQ(values.count(R"(gb10tune_watch_gpu_power_limit_watts{gpu="1"})"), 0U);
  EXPECT_EQ(values.count(R"(gb10tune_watch_gpu_memory_used_bytes{gpu="1"})"), 0U);
  EXPECT_EQ(values.count(R"(gb10tune_watch_gpu_memory_total_bytes{gpu="1"})"), 0U);
  // Swap is sampled and exported with the rest.
  EXPECT_EQ(values.count("gb10tune_watch_swap_total_bytes"), 1U);
  EXPECT_EQ(values.count("gb10tune_watch_swap_used_bytes"), 1U);
}

TEST(CliWatchNvml, ALibraryWithoutTheSensorCallsExportsNoSensorFigure) {
  const NvmlWatchedServer server;
  ASSERT_NE(server.pid, 0);
  std::string error;
  const auto values =
      scrape_watch_with(fake_nvml_env(GB10TUNE_FAKE_NVML_WITHOUT_SENSORS, server.pid), error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(values.at("gb10tune_watch_server_gpu_bytes"), 3221225472.0);
  EXPECT_EQ(values.at(R"(gb10tune_watch_gpu_info{gpu="1",name=""})"), 1);
  EXPECT_FALSE(any_key_holds(values, "gpu_temperature")) << values.size();
  EXPECT_FALSE(any_key_holds(values, "gpu_power")) << values.size();
  EXPECT_FALSE(any_key_holds(values, "gpu_memory")) << values.size();
}

TEST(CliWatchNvml, TheJsonLinesCarryEachGpu) {
  const NvmlWatchedServer server;
  ASSERT_NE(server.pid, 0);
  std::vector<std::string> env;
  for (const auto& [name, value] : fake_nvml_env(GB10TUNE_FAKE_NVML, server.pid)) {
    env.push_back(name + "=" + value);
  }
  const CliResult result = run_binary({"watch", "--json", "--once"}, env);
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto first = nlohmann::json::parse(result.out.substr(0, result.out.find('\n')));
  EXPECT_EQ(first["event"], "watching");
  ASSERT_EQ(first["gpus"].size(), 2U) << first.dump();
  EXPECT_EQ(first["gpus"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(first["gpus"][0]["temperature_celsius"], 61.0);
  EXPECT_EQ(first["gpus"][0]["power_watts"], 123.456);
  EXPECT_EQ(first["gpus"][1]["temperature_celsius"], 48.0);
  EXPECT_TRUE(first["gpus"][1]["power_watts"].is_null());
  EXPECT_TRUE(first["gpus"][1]["memory_total_bytes"].is_null());
}

}  // namespace
}  // namespace gb10tune::testing
