#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_context.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;
using testing::run_cli_on;

platform::Environment env_with_state(const testing::TempDir& dir) {
  platform::Environment env;
  env.set("HOME", (dir.path() / "home").string());
  env.set("XDG_STATE_HOME", (dir.path() / "state").string());
  env.set("PATH", "/nonexistent");
  return env;
}

TEST(CliProbe, Gb10JsonNamesTheGb10Advice) {
  testing::TempDir dir;
  const auto result = run_cli_on("gb10", {"probe", "--json", "--no-save"}, env_with_state(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["tool"], "gb10tune");
  EXPECT_EQ(doc["command"], "probe");
  EXPECT_EQ(doc["machine"]["class"], "GB10 (integrated, unified memory)");
  EXPECT_EQ(doc["build"]["arm_arch"], "armv9.2-a+dotprod+i8mm+bf16+sve2");
  EXPECT_EQ(doc["build"]["cuda_architectures"], json::array({"121a-real"}));
  EXPECT_EQ(doc["gpu"]["devices"][0]["compute_capability"], "12.1");
  EXPECT_EQ(doc["gpu"]["devices"][0]["pageable_memory_access"], true);
  EXPECT_TRUE(doc["memory"]["budget"]["bytes"].is_number_unsigned());
  EXPECT_EQ(doc["memory"]["budget"]["bytes"], 109876544ull * 1024);
  EXPECT_EQ(doc["cpu"]["logical_cpus"], 20);
  EXPECT_EQ(doc["bandwidth"]["ran"], false);
  std::vector<std::string> facts;
  for (const json& advice : doc["advice"]) {
    facts.push_back(advice["id"].get<std::string>() + "/" + advice["fact"].get<std::string>());
  }
  EXPECT_EQ(facts, (std::vector<std::string>{"build-line/K11", "ggml-native/K11",
                                             "unified-memory-env/K2", "nvidia-smi-memory/K3",
                                             "memory-budget/K19", "mmap-loading/K19"}));
}

TEST(CliProbe, Gb10TextMatchesGolden) {
  testing::TempDir dir;
  const auto result = run_cli_on("gb10", {"probe", "--no-save"}, env_with_state(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  testing::expect_golden("probe-gb10.txt", result.out);
}

TEST(CliProbe, NoGpuTextMatchesGolden) {
  testing::TempDir dir;
  const auto result = run_cli_on("no-gpu", {"probe", "--no-save"}, env_with_state(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  testing::expect_golden("probe-no-gpu.txt", result.out);
}

// A discrete GPU: the budgets launch plans against, one per GPU (NVML free − the GPU
// reserve) and one for the host (MemAvailable − the reserve), shown apart.
TEST(CliProbe, DiscreteGpusShowEachDevicesBudgetAndTheHostsApart) {
  testing::TempDir dir;
  const auto result = run_cli_on("dgpu-2x", {"probe", "--json", "--no-save"}, env_with_state(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  const json& b = doc["budgets"];
  EXPECT_EQ(b["pool"], "per-device");
  ASSERT_EQ(b["gpus"].size(), 2u);
  EXPECT_EQ(b["gpus"][1]["name"], "CUDA1");
  EXPECT_EQ(b["gpus"][1]["pci_bus_id"], "0000:02:00.0");
  EXPECT_EQ(b["gpus"][0]["free_bytes"], 24'900'000'000ull);
  EXPECT_EQ(b["gpus"][0]["total_bytes"], 25393692672ull);
  EXPECT_EQ(b["gpus"][0]["reserve_bytes"], 1ull << 30);
  EXPECT_EQ(b["gpus"][0]["available_bytes"], 24'900'000'000ull - (1ull << 30));
  // dgpu-2x: MemAvailable 125000000 kB, no cgroup limit below it.
  EXPECT_EQ(b["host_available_bytes"], 125'000'000ull * 1024 - 12'000'000'000ull);

  const auto reserved = run_cli_on(
      "dgpu-2x", {"probe", "--json", "--no-save", "--gpu-reserve", "2GiB", "--reserve", "4GB"},
      env_with_state(dir));
  ASSERT_EQ(reserved.exit_code, 0) << reserved.err;
  const json r = json::parse(reserved.out)["budgets"];
  EXPECT_EQ(r["gpus"][1]["available_bytes"], 24'900'000'000ull - (2ull << 30));
  EXPECT_EQ(r["host_available_bytes"], 125'000'000ull * 1024 - 4'000'000'000ull);

  const auto bad =
      run_cli_on("dgpu-2x", {"probe", "--no-save", "--gpu-reserve", "lots"}, env_with_state(dir));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--gpu-reserve 'lots' is not a size"), std::string::npos) << bad.err;
}

TEST(CliProbe, DiscreteGpusTextMatchesGolden) {
  testing::TempDir dir;
  const auto result = run_cli_on("dgpu-2x", {"probe", "--no-save"}, env_with_state(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  testing::expect_golden("probe-dgpu-2x.txt", result.out);
}

// GB10 keeps one pool: no GPU budgets, the host budget is everything's.
TEST(CliProbe, Gb10HasOnePool) {
  testing::TempDir dir;
  const auto result = run_cli_on("gb10", {"probe", "--json", "--no-save"}, env_with_state(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json b = json::parse(result.out)["budgets"];
  EXPECT_EQ(b["pool"], "one");
  EXPECT_TRUE(b["gpus"].empty());
  EXPECT_EQ(b["host_available_bytes"], 109876544ull * 1024 - 12'000'000'000ull);
}

TEST(CliProbe, SavesTheDocumentUnderTheStateDir) {
  testing::TempDir dir;
  const auto result = run_cli_on("x86-discrete", {"probe", "--json"}, env_with_state(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto saved = dir.path() / "state" / "gb10tune" / "probe.json";
  EXPECT_EQ(json::parse(testing::read_text(saved)), json::parse(result.out));
  EXPECT_NE(result.err.find(saved.string()), std::string::npos);
}

TEST(CliProbe, UnwritableStateDirIsOnlyAWarning) {
  testing::TempDir dir;
  platform::Environment env = env_with_state(dir);
  dir.write("state", "a file where the directory should be");
  const auto result = run_cli_on("x86-discrete", {"probe"}, env);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.err.find("warning: probe result not saved"), std::string::npos) << result.err;
}

TEST(CliProbe, MalformedProcFilesExitOneWithClearMessages) {
  testing::TempDir dir;
  const auto result =
      run_cli_on("malformed", {"probe", "--json", "--no-save"}, env_with_state(dir));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("error: "), std::string::npos);
  EXPECT_NE(result.err.find("malformed/proc/cpuinfo lists no processor"), std::string::npos)
      << result.err;
  const json doc = json::parse(result.out);  // still one valid document
  EXPECT_EQ(doc["errors"].size(), 2u);
  EXPECT_TRUE(doc["cpu"].is_null());
}

TEST(CliProbe, UnknownOptionIsAUsageError) {
  const auto result = run_cli_on("gb10", {"probe", "--bogus"}, platform::Environment{});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--bogus"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace gb10tune
