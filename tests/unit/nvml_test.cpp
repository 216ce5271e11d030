// The NVML wrapper against the tests' stand-in library (support/fake_nvml.cpp), loaded the way
// GB10TUNE_NVML_LIBRARY makes gb10tune load it: each GPU's sensors in base units, a figure the
// device does not support or the library lacks is unknown (never 0), a library that cannot be
// loaded is named.
#include "gb10tune/platform/nvml.hpp"

#include <gtest/gtest.h>

#include "gb10tune/gpu/gpu_backend.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {
namespace {

// Two GPUs: an H200 that reports everything, and a GB10 that has a temperature only.
struct TwoFakeGpus {
  ScopedEnv devices{"FAKE_NVML_DEVICES", "2"};
  ScopedEnv names{"FAKE_NVML_NAMES", "NVIDIA H200,NVIDIA GB10"};
  ScopedEnv temperature{"FAKE_NVML_TEMPERATURE", "61,48"};
  ScopedEnv power{"FAKE_NVML_POWER_MW", "123456,-"};
  ScopedEnv limit{"FAKE_NVML_POWER_LIMIT_MW", "700000,-"};
  ScopedEnv memory{"FAKE_NVML_MEMORY", "1073741824:150754820096,-"};
  ScopedEnv process{"FAKE_NVML_PROCESS", "4242:5242880"};
};

// How many of the reading's figures are known.
int known_sensor_figures(const platform::GpuReading& r) {
  return r.temperature_celsius.has_value() + r.power_watts.has_value() +
         r.power_limit_watts.has_value() + r.memory_used_bytes.has_value() +
         r.memory_total_bytes.has_value();
}

// The session's readings; a test failure when it is not usable.
std::vector<platform::GpuReading> usable_readings(const platform::NvmlSession& session) {
  EXPECT_TRUE(session.usable());
  return session.readings();
}

TEST(NvmlSensors, EachGpuReadsInBaseUnitsAndUnsupportedIsUnknown) {
  const TwoFakeGpus gpus;
  const platform::NvmlSession session(GB10TUNE_FAKE_NVML);
  const auto readings = usable_readings(session);
  ASSERT_EQ(readings.size(), 2U);
  const platform::GpuReading& h200 = readings[0];
  EXPECT_EQ(h200.nvml_index, 0);
  EXPECT_EQ(h200.name, "NVIDIA H200");
  EXPECT_EQ(h200.temperature_celsius, 61.0);
  EXPECT_EQ(h200.power_watts, 123.456);
  EXPECT_EQ(h200.power_limit_watts, 700.0);
  EXPECT_EQ(h200.memory_used_bytes, 1073741824U);
  EXPECT_EQ(h200.memory_total_bytes, 150754820096U);
  const platform::GpuReading& gb10 = readings[1];
  EXPECT_EQ(gb10.nvml_index, 1);
  EXPECT_EQ(gb10.name, "NVIDIA GB10");
  EXPECT_EQ(gb10.temperature_celsius, 48.0);
  EXPECT_EQ(known_sensor_figures(gb10), 1);  // NOT_SUPPORTED: unknown, not 0
  EXPECT_EQ(session.process_bytes(4242), 5242880U);
  EXPECT_EQ(session.process_bytes(4243), 0U);
}

// Driver 580 on an H200 (2026-12-02): nvmlDeviceGetMemoryInfo's `used` was 1898 MiB where
// nvidia-smi showed 1283 MiB; the 615 MiB between them is the driver's reserve, which the v2
// call reports apart. The export follows nvidia-smi; without v2, v1's figure is all there is.
TEST(NvmlSensors, MemoryInUseLeavesTheDriversReserveOutAsNvidiaSmiDoes) {
  const TwoFakeGpus gpus;
  const ScopedEnv reserved{"FAKE_NVML_RESERVED", "644874240,-"};
  const platform::NvmlSession session(GB10TUNE_FAKE_NVML);
  EXPECT_EQ(usable_readings(session).at(0).memory_used_bytes, 1073741824U);
  EXPECT_EQ(usable_readings(session).at(0).memory_total_bytes, 150754820096U);
  const ScopedEnv no_v2{"FAKE_NVML_MEMORY_V2", "-"};
  EXPECT_EQ(usable_readings(session).at(0).memory_used_bytes, 1073741824U + 644874240U);
}

TEST(NvmlSensors, ReadingsFollowTheDeviceFromOneCallToTheNext) {
  const TwoFakeGpus gpus;
  const platform::NvmlSession session(GB10TUNE_FAKE_NVML);
  ASSERT_EQ(session.readings().at(0).temperature_celsius, 61.0);
  const ScopedEnv hotter{"FAKE_NVML_TEMPERATURE", "83,-"};
  const auto later = session.readings();
  EXPECT_EQ(later.at(0).temperature_celsius, 83.0);
  EXPECT_FALSE(later.at(1).temperature_celsius);
}

TEST(NvmlSensors, ALibraryWithoutTheSensorCallsStillCountsProcesses) {
  const TwoFakeGpus gpus;
  const platform::NvmlSession session(GB10TUNE_FAKE_NVML_WITHOUT_SENSORS);
  const auto readings = usable_readings(session);
  ASSERT_EQ(readings.size(), 2U);
  for (const platform::GpuReading& reading : readings) {
    EXPECT_EQ(reading.name, "");
    EXPECT_EQ(known_sensor_figures(reading), 0);
  }
  EXPECT_EQ(readings[1].nvml_index, 1);
  EXPECT_EQ(session.process_bytes(4242), 5242880U);
}

TEST(NvmlSensors, ALibraryThatCannotBeLoadedIsNamed) {
  const platform::NvmlSession session("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(session.usable());
  EXPECT_TRUE(session.readings().empty());
  EXPECT_FALSE(session.process_bytes(4242));
  const platform::NvmlReport report = platform::query_nvml("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(report.loaded);
  EXPECT_NE(report.detail.find("NVML not loaded: /nonexistent/libnvidia-ml.so.1"),
            std::string::npos)
      << report.detail;
}

TEST(NvmlSensors, TheVariableChoosesTheLibrary) {
  platform::Environment env;
  EXPECT_EQ(platform::nvml_library(env), "libnvidia-ml.so.1");
  env.set("GB10TUNE_NVML_LIBRARY", "");
  EXPECT_EQ(platform::nvml_library(env), "libnvidia-ml.so.1");
  env.set("GB10TUNE_NVML_LIBRARY", GB10TUNE_FAKE_NVML);
  EXPECT_EQ(platform::nvml_library(env), GB10TUNE_FAKE_NVML);
  const TwoFakeGpus gpus;
  const platform::NvmlReport report = platform::query_nvml(platform::nvml_library(env));
  ASSERT_TRUE(report.loaded) << report.detail;
  EXPECT_EQ(report.detail, GB10TUNE_FAKE_NVML);
  EXPECT_EQ(report.driver_version, "580.95.05");
  ASSERT_EQ(report.processes.size(), 1U);
  EXPECT_EQ(report.processes[0].pid, 4242U);
}

TEST(NvmlSensors, TheSystemBackendReadsTheChosenLibrary) {
  const TwoFakeGpus gpus;
  const auto backend = gpu::make_system_backend(GB10TUNE_FAKE_NVML);
  const auto readings = backend->gpu_readings();
  ASSERT_EQ(readings.size(), 2U);
  EXPECT_EQ(readings[0].power_watts, 123.456);
  EXPECT_EQ(backend->process_gpu_bytes(4242), 5242880U);
  EXPECT_EQ(backend->query_nvml().detail, GB10TUNE_FAKE_NVML);
  EXPECT_TRUE(gpu::make_system_backend("/nonexistent/libnvidia-ml.so.1")->gpu_readings().empty());
}

}  // namespace
}  // namespace gb10tune::testing
