// A stand-in for the driver's libnvidia-ml.so.1, loaded by gb10tune through
// GB10TUNE_NVML_LIBRARY: the NVML entry points gb10tune calls, answering from environment
// variables read at every call, so that a test sets what each GPU reports.
//
//   FAKE_NVML_DEVICES        the number of GPUs (default 1, at most 8)
//   FAKE_NVML_NAMES          names, one per GPU, comma-separated ("NVIDIA H200,NVIDIA GB10")
//   FAKE_NVML_TEMPERATURE    degrees Celsius per GPU ("61,70")
//   FAKE_NVML_POWER_MW       power draw per GPU, in milliwatts
//   FAKE_NVML_POWER_LIMIT_MW the enforced power limit per GPU, in milliwatts
//   FAKE_NVML_MEMORY         USED:TOTAL bytes per GPU (nvidia-smi's "used")
//   FAKE_NVML_RESERVED       bytes the driver reserves per GPU (default 0): v1 of the memory
//                            call counts them as used, v2 apart, as driver 580 does
//   FAKE_NVML_MEMORY_V2      "-": the v2 memory call answers NOT_SUPPORTED (v1 still answers)
//   FAKE_NVML_PROCESS        PID:BYTES, one compute process on GPU 0
//
// A figure whose entry is missing or "-" answers NVML_ERROR_NOT_SUPPORTED, as a GB10 does for
// its memory. Built with FAKE_NVML_WITHOUT_SENSORS, the library lacks the sensor entry points
// (name, temperature, power, power limit, memory info), as an old driver's would.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kArgumentVersionMismatch = 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
constexpr unsigned int kMaxDevices = 8;
int g_devices[kMaxDevices];  // the handles point here

// Entry `index` of the comma-separated list in `variable`; "" when there is none.
std::string fake_nvml_entry(const char* variable, int index) {
  const char* value = std::getenv(variable);
  std::string list = value != nullptr ? value : "";
  for (int i = 0; i < index && !list.empty(); ++i) {
    const auto comma = list.find(',');
    list = comma == std::string::npos ? "" : list.substr(comma + 1);
  }
  return list.substr(0, list.find(','));
}

int device_index(void* device) {
  return static_cast<int>(static_cast<int*>(device) - g_devices);
}

// The number in entry `device` of `variable`, or NOT_SUPPORTED.
int fake_nvml_number(const char* variable, void* device, unsigned long long& out) {
  const std::string entry = fake_nvml_entry(variable, device_index(device));
  if (entry.empty() || entry == "-") {
    return kNotSupported;
  }
  out = std::strtoull(entry.c_str(), nullptr, 10);
  return kSuccess;
}

}  // namespace

extern "C" {

struct FakeNvmlMemory {
  unsigned long long total, free, used;
};
struct FakeNvmlMemoryV2 {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
struct FakeNvmlProcess {
  unsigned int pid;
  unsigned long long used;
  unsigned int gpu_instance, compute_instance;
};

int nvmlInit_v2() {
  return kSuccess;
}
int nvmlShutdown() {
  return kSuccess;
}

int nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  std::snprintf(version, length, "%s", "580.95.05");
  return kSuccess;
}

int nvmlDeviceGetCount_v2(unsigned int* count) {
  const char* value = std::getenv("FAKE_NVML_DEVICES");
  const unsigned long n = value != nullptr ? std::strtoul(value, nullptr, 10) : 1;
  *count = n < kMaxDevices ? static_cast<unsigned int>(n) : kMaxDevices;
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (index >= kMaxDevices) {
    return kInvalidArgument;
  }
  *device = &g_devices[index];
  return kSuccess;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count,
                                            FakeNvmlProcess* infos) {
  const std::string entry = fake_nvml_entry("FAKE_NVML_PROCESS", 0);
  const auto colon = entry.find(':');
  if (device_index(device) != 0 || colon == std::string::npos || *count == 0) {
    *count = 0;
    return kSuccess;
  }
  infos[0] = {static_cast<unsigned int>(std::strtoul(entry.c_str(), nullptr, 10)),
              std::strtoull(entry.c_str() + colon + 1, nullptr, 10), 0, 0};
  *count = 1;
  return kSuccess;
}

#ifndef FAKE_NVML_WITHOUT_SENSORS
int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  const std::string entry = fake_nvml_entry("FAKE_NVML_NAMES", device_index(device));
  if (entry.empty()) {
    return kNotSupported;
  }
  std::snprintf(name, length, "%s", entry.c_str());
  return kSuccess;
}

int nvmlDeviceGetTemperature(void* device, unsigned int sensor, unsigned int* celsius) {
  unsigned long long value = 0;
  const int rc =
      sensor == 0 ? fake_nvml_number("FAKE_NVML_TEMPERATURE", device, value) : kInvalidArgument;
  *celsius = static_cast<unsigned int>(value);
  return rc;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  unsigned long long value = 0;
  const int rc = fake_nvml_number("FAKE_NVML_POWER_MW", device, value);
  *milliwatts = static_cast<unsigned int>(value);
  return rc;
}

int nvmlDeviceGetEnforcedPowerLimit(void* device, unsigned int* milliwatts) {
  unsigned long long value = 0;
  const int rc = fake_nvml_number("FAKE_NVML_POWER_LIMIT_MW", device, value);
  *milliwatts = static_cast<unsigned int>(value);
  return rc;
}

// Entry `device` of FAKE_NVML_MEMORY and FAKE_NVML_RESERVED in `memory` (v2's fields).
static int fake_nvml_memory(void* device, FakeNvmlMemoryV2& memory) {
  const std::string entry = fake_nvml_entry("FAKE_NVML_MEMORY", device_index(device));
  const auto colon = entry.find(':');
  if (colon == std::string::npos) {
    return kNotSupported;
  }
  unsigned long long reserved = 0;
  fake_nvml_number("FAKE_NVML_RESERVED", device, reserved);
  memory.used = std::strtoull(entry.c_str(), nullptr, 10);
  memory.total = std::strtoull(entry.c_str() + colon + 1, nullptr, 10);
  memory.reserved = reserved;
  memory.free = memory.total - memory.reserved - memory.used;
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(void* device, FakeNvmlMemory* memory) {
  FakeNvmlMemoryV2 v2{};
  const int rc = fake_nvml_memory(device, v2);
  memory->total = v2.total;
  memory->free = v2.free;
  memory->used = v2.used + v2.reserved;
  return rc;
}

int nvmlDeviceGetMemoryInfo_v2(void* device, FakeNvmlMemoryV2* memory) {
  if (memory->version != (sizeof(FakeNvmlMemoryV2) | (2u << 24))) {
    return kArgumentVersionMismatch;
  }
  const char* v2 = std::getenv("FAKE_NVML_MEMORY_V2");
  if (v2 != nullptr && std::string(v2) == "-") {
    return kNotSupported;
  }
  const unsigned int version = memory->version;
  const int rc = fake_nvml_memory(device, *memory);
  memory->version = version;
  return rc;
}
#endif

}  // extern "C"
