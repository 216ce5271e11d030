#include "gb10tune/platform/nvml.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <vector>

namespace gb10tune::platform {

// The parts of NVML's C ABI gb10tune uses, declared here so that building needs no NVML
// header. Layouts follow the stable v2 structures of nvml.h. A named namespace (not an anonymous
// one): NvmlSession::Api holds these types.
namespace nvml_abi {
using NvmlReturn = int;
using NvmlDevice = void*;
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
struct NvmlMemory {  // nvmlMemory_t (v1): `used` includes the memory the driver reserves
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct NvmlMemoryV2 {  // nvmlMemory_v2_t: `used` without the driver's reserve, as nvidia-smi shows
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
// NVML_STRUCT_VERSION(Memory, 2): the structure's size with the version in the top byte.
constexpr unsigned int kNvmlMemoryV2Version = sizeof(NvmlMemoryV2) | (2u << 24);
struct NvmlPciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];
};
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr unsigned long long kNvmlValueNotAvailable = ~0ULL;
constexpr unsigned int kNvmlTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU
constexpr unsigned int kNvmlNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

using NvmlProcessesFn = NvmlReturn (*)(NvmlDevice, unsigned int*, NvmlProcessInfo*);
using NvmlMemoryFn = NvmlReturn (*)(NvmlDevice, NvmlMemory*);
using NvmlMemoryV2Fn = NvmlReturn (*)(NvmlDevice, NvmlMemoryV2*);
using NvmlNameFn = NvmlReturn (*)(NvmlDevice, char*, unsigned int);
using NvmlTemperatureFn = NvmlReturn (*)(NvmlDevice, unsigned int, unsigned int*);
using NvmlMilliwattsFn = NvmlReturn (*)(NvmlDevice, unsigned int*);

// The sensor entry points; each null where the library lacks it.
struct NvmlSensorFns {
  NvmlNameFn name = nullptr;                // nvmlDeviceGetName
  NvmlTemperatureFn temperature = nullptr;  // nvmlDeviceGetTemperature
  NvmlMilliwattsFn power = nullptr;         // nvmlDeviceGetPowerUsage
  NvmlMilliwattsFn power_limit = nullptr;   // nvmlDeviceGetEnforcedPowerLimit
  NvmlMemoryFn memory = nullptr;            // nvmlDeviceGetMemoryInfo
  NvmlMemoryV2Fn memory_v2 = nullptr;       // nvmlDeviceGetMemoryInfo_v2 (drivers from 510)
};

// One device of a session: NVML's index, its handle and its name (read once).
struct NvmlDeviceEntry {
  int index = 0;
  NvmlDevice handle = nullptr;
  std::string name;
};

}  // namespace nvml_abi

namespace {

using namespace nvml_abi;

// Unloads the library on scope exit.
class Library {
 public:
  explicit Library(const char* name) : m_handle(::dlopen(name, RTLD_NOW | RTLD_LOCAL)) {}
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() {
    if (m_handle != nullptr) {
      ::dlclose(m_handle);
    }
  }
  bool loaded() const { return m_handle != nullptr; }
  template <class Fn>
  Fn symbol(const char* name) const {
    return reinterpret_cast<Fn>(::dlsym(m_handle, name));
  }

 private:
  void* m_handle;
};

}  // namespace

std::string nvml_library(const Environment& env) {
  const auto chosen = env.get(std::string(kNvmlLibraryVariable));
  return chosen && !chosen->empty() ? *chosen : std::string(kNvmlDefaultLibrary);
}

NvmlReport query_nvml(const std::string& library) {
  NvmlReport report;
  Library nvml(library.c_str());
  if (!nvml.loaded()) {
    const char* why = ::dlerror();
    report.detail = fmt::format("NVML not loaded: {}", why != nullptr ? why : "unknown reason");
    return report;
  }
  const auto init = nvml.symbol<NvmlReturn (*)()>("nvmlInit_v2");
  const auto shutdown = nvml.symbol<NvmlReturn (*)()>("nvmlShutdown");
  const auto driver_version =
      nvml.symbol<NvmlReturn (*)(char*, unsigned int)>("nvmlSystemGetDriverVersion");
  const auto device_count = nvml.symbol<NvmlReturn (*)(unsigned int*)>("nvmlDeviceGetCount_v2");
  const auto device_handle =
      nvml.symbol<NvmlReturn (*)(unsigned int, NvmlDevice*)>("nvmlDeviceGetHandleByIndex_v2");
  const auto processes = nvml.symbol<NvmlProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v3");
  const auto memory_info = nvml.symbol<NvmlMemoryFn>("nvmlDeviceGetMemoryInfo");
  const auto pci_info =
      nvml.symbol<NvmlReturn (*)(NvmlDevice, NvmlPciInfo*)>("nvmlDeviceGetPciInfo_v3");
  if (init == nullptr || shutdown == nullptr || driver_version == nullptr) {
    report.detail = fmt::format("NVML not usable: {} lacks nvmlInit_v2 (driver too old)", library);
    return report;
  }
  if (const NvmlReturn rc = init(); rc != kNvmlSuccess) {
    report.detail = fmt::format("NVML not usable: nvmlInit_v2 returned {}", rc);
    return report;
  }
  report.loaded = true;
  report.detail = library;
  std::array<char, 96> version{};
  if (driver_version(version.data(), version.size()) == kNvmlSuccess) {
    report.driver_version = version.data();
  }
  unsigned int count = 0;
  if (device_count != nullptr && device_handle != nullptr && processes != nullptr &&
      device_count(&count) == kNvmlSuccess) {
    for (unsigned int index = 0; index < count; ++index) {
      NvmlDevice device = nullptr;
      if (device_handle(index, &device) != kNvmlSuccess) {
        continue;
      }
      NvmlMemory memory{};
      NvmlPciInfo pci{};
      if (memory_info != nullptr && pci_info != nullptr &&
          memory_info(device, &memory) == kNvmlSuccess && pci_info(device, &pci) == kNvmlSuccess) {
        report.memory.push_back(
            {static_cast<int>(index),
             fmt::format("{:04x}:{:02x}:{:02x}.0", pci.domain, pci.bus, pci.device), memory.total,
             memory.free});
      }
      const std::size_t memory_entry = report.memory.size();
      std::array<NvmlProcessInfo, 256> infos{};
      unsigned int n = infos.size();
      if (processes(device, &n, infos.data()) != kNvmlSuccess) {
        if (memory_entry > 0 &&
            report.memory[memory_entry - 1].nvml_index == static_cast<int>(index)) {
          report.memory[memory_entry - 1].processes_listed = false;
        }
        continue;
      }
      for (unsigned int i = 0; i < n && i < infos.size(); ++i) {
        GpuProcessMemory entry;
        entry.device_index = static_cast<int>(index);
        entry.pid = infos[i].pid;
        entry.used_known = infos[i].used_gpu_memory != kNvmlValueNotAvailable;
        entry.used_bytes = entry.used_known ? infos[i].used_gpu_memory : 0;
        report.processes.push_back(entry);
      }
    }
  }
  shutdown();
  return report;
}

// The library and the entry points a session uses, resolved once.
struct NvmlSession::Api {
  void* handle = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlProcessesFn processes = nullptr;
  NvmlSensorFns sensors;  // each null where the library lacks it
  std::vector<NvmlDeviceEntry> devices;
};

namespace {

// The sensor entry points of the library `handle`; those it lacks stay null.
NvmlSensorFns resolve_sensors(void* handle) {
  NvmlSensorFns fns;
  fns.name = reinterpret_cast<NvmlNameFn>(::dlsym(handle, "nvmlDeviceGetName"));
  fns.temperature =
      reinterpret_cast<NvmlTemperatureFn>(::dlsym(handle, "nvmlDeviceGetTemperature"));
  fns.power = reinterpret_cast<NvmlMilliwattsFn>(::dlsym(handle, "nvmlDeviceGetPowerUsage"));
  fns.power_limit =
      reinterpret_cast<NvmlMilliwattsFn>(::dlsym(handle, "nvmlDeviceGetEnforcedPowerLimit"));
  fns.memory = reinterpret_cast<NvmlMemoryFn>(::dlsym(handle, "nvmlDeviceGetMemoryInfo"));
  fns.memory_v2 = reinterpret_cast<NvmlMemoryV2Fn>(::dlsym(handle, "nvmlDeviceGetMemoryInfo_v2"));
  return fns;
}

// The name NVML gives `device`; "" when it gives none.
std::string nvml_device_name(const NvmlSensorFns& fns, NvmlDevice device) {
  std::array<char, kNvmlNameBufferSize> name{};
  if (fns.name == nullptr || fns.name(device, name.data(), name.size()) != kNvmlSuccess) {
    return {};
  }
  name.back() = '\0';
  return name.data();
}

// A milliwatt figure in watts; nullopt when the entry point is missing or the call fails
// (NVML_ERROR_NOT_SUPPORTED included).
std::optional<double> nvml_watts(NvmlMilliwattsFn fn, NvmlDevice device) {
  unsigned int milliwatts = 0;
  if (fn == nullptr || fn(device, &milliwatts) != kNvmlSuccess) {
    return std::nullopt;
  }
  return static_cast<double>(milliwatts) / 1000.0;
}

// One device's sensors now.
GpuReading read_nvml_device(const NvmlSensorFns& fns, const NvmlDeviceEntry& device) {
  GpuReading reading;
  reading.nvml_index = device.index;
  reading.name = device.name;
  unsigned int celsius = 0;
  if (fns.temperature != nullptr &&
      fns.temperature(device.handle, kNvmlTemperatureGpu, &celsius) == kNvmlSuccess) {
    reading.temperature_celsius = static_cast<double>(celsius);
  }
  reading.power_watts = nvml_watts(fns.power, device.handle);
  reading.power_limit_watts = nvml_watts(fns.power_limit, device.handle);
  // A total of 0 is no figure either: a device without memory of its own. The v2 call first:
  // v1's `used` also counts what the driver reserves (615 MiB more than nvidia-smi's "used" on
  // an H200 with driver 580), v2 keeps that apart.
  NvmlMemoryV2 memory_v2{};
  memory_v2.version = kNvmlMemoryV2Version;
  NvmlMemory memory{};
  if (fns.memory_v2 != nullptr && fns.memory_v2(device.handle, &memory_v2) == kNvmlSuccess &&
      memory_v2.total > 0) {
    reading.memory_used_bytes = memory_v2.used;
    reading.memory_total_bytes = memory_v2.total;
  } else if (fns.memory != nullptr && fns.memory(device.handle, &memory) == kNvmlSuccess &&
             memory.total > 0) {
    reading.memory_used_bytes = memory.used;
    reading.memory_total_bytes = memory.total;
  }
  return reading;
}

}  // namespace

NvmlSession::NvmlSession(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return;
  }
  m_api = new Api;
  m_api->handle = handle;
  const auto sym = [handle](const char* name) { return ::dlsym(handle, name); };
  const auto init = reinterpret_cast<NvmlReturn (*)()>(sym("nvmlInit_v2"));
  m_api->shutdown = reinterpret_cast<NvmlReturn (*)()>(sym("nvmlShutdown"));
  m_api->processes =
      reinterpret_cast<NvmlProcessesFn>(sym("nvmlDeviceGetComputeRunningProcesses_v3"));
  m_api->sensors = resolve_sensors(handle);
  const auto device_count =
      reinterpret_cast<NvmlReturn (*)(unsigned int*)>(sym("nvmlDeviceGetCount_v2"));
  const auto device_handle = reinterpret_cast<NvmlReturn (*)(unsigned int, NvmlDevice*)>(
      sym("nvmlDeviceGetHandleByIndex_v2"));
  if (init == nullptr || m_api->shutdown == nullptr || m_api->processes == nullptr ||
      device_count == nullptr || device_handle == nullptr || init() != kNvmlSuccess) {
    m_api->shutdown = nullptr;  // not initialised: nothing to shut down
    return;
  }
  unsigned int count = 0;
  if (device_count(&count) == kNvmlSuccess) {
    for (unsigned int index = 0; index < count; ++index) {
      NvmlDevice device = nullptr;
      if (device_handle(index, &device) == kNvmlSuccess) {
        m_api->devices.push_back(
            {static_cast<int>(index), device, nvml_device_name(m_api->sensors, device)});
      }
    }
  }
  m_usable = true;
}

NvmlSession::~NvmlSession() {
  if (m_api == nullptr) {
    return;
  }
  if (m_api->shutdown != nullptr) {
    m_api->shutdown();
  }
  ::dlclose(m_api->handle);
  delete m_api;
}

std::optional<std::uint64_t> NvmlSession::process_bytes(std::uint32_t pid) const {
  if (!m_usable) {
    return std::nullopt;
  }
  std::uint64_t bytes = 0;
  bool any = false;
  std::array<NvmlProcessInfo, 256> infos{};
  for (const NvmlDeviceEntry& device : m_api->devices) {
    unsigned int n = infos.size();
    if (m_api->processes(device.handle, &n, infos.data()) != kNvmlSuccess) {
      continue;
    }
    any = true;
    for (unsigned int i = 0; i < n && i < infos.size(); ++i) {
      if (infos[i].pid == pid && infos[i].used_gpu_memory != kNvmlValueNotAvailable) {
        bytes += infos[i].used_gpu_memory;
      }
    }
  }
  return any ? std::optional<std::uint64_t>(bytes) : std::nullopt;
}

std::vector<GpuReading> NvmlSession::readings() const {
  std::vector<GpuReading> out;
  if (!m_usable) {
    return out;
  }
  for (const NvmlDeviceEntry& device : m_api->devices) {
    out.push_back(read_nvml_device(m_api->sensors, device));
  }
  return out;
}

}  // namespace gb10tune::platform
