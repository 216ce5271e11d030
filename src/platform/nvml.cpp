#include "gb10tune/platform/nvml.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <vector>

namespace gb10tune::platform {

namespace {

// The parts of NVML's C ABI gb10tune uses, declared here so that building needs no NVML
// header. Layouts follow the stable v2 structures of nvml.h.
using NvmlReturn = int;
using NvmlDevice = void*;
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
struct NvmlMemory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
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

NvmlReport query_nvml() {
  NvmlReport report;
  Library nvml("libnvidia-ml.so.1");
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
  const auto processes = nvml.symbol<NvmlReturn (*)(NvmlDevice, unsigned int*, NvmlProcessInfo*)>(
      "nvmlDeviceGetComputeRunningProcesses_v3");
  const auto memory_info =
      nvml.symbol<NvmlReturn (*)(NvmlDevice, NvmlMemory*)>("nvmlDeviceGetMemoryInfo");
  const auto pci_info =
      nvml.symbol<NvmlReturn (*)(NvmlDevice, NvmlPciInfo*)>("nvmlDeviceGetPciInfo_v3");
  if (init == nullptr || shutdown == nullptr || driver_version == nullptr) {
    report.detail = "NVML not usable: libnvidia-ml.so.1 lacks nvmlInit_v2 (driver too old)";
    return report;
  }
  if (const NvmlReturn rc = init(); rc != kNvmlSuccess) {
    report.detail = fmt::format("NVML not usable: nvmlInit_v2 returned {}", rc);
    return report;
  }
  report.loaded = true;
  report.detail = "libnvidia-ml.so.1";
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
  void* processes = nullptr;   // nvmlDeviceGetComputeRunningProcesses_v3
  std::vector<void*> devices;  // nvmlDevice_t handles
};

namespace {

using NvmlProcessesFn = NvmlReturn (*)(NvmlDevice, unsigned int*, NvmlProcessInfo*);

}  // namespace

NvmlSession::NvmlSession() {
  void* handle = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return;
  }
  m_api = new Api;
  m_api->handle = handle;
  const auto sym = [handle](const char* name) { return ::dlsym(handle, name); };
  const auto init = reinterpret_cast<NvmlReturn (*)()>(sym("nvmlInit_v2"));
  m_api->shutdown = reinterpret_cast<NvmlReturn (*)()>(sym("nvmlShutdown"));
  m_api->processes = sym("nvmlDeviceGetComputeRunningProcesses_v3");
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
        m_api->devices.push_back(device);
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
  const auto processes = reinterpret_cast<NvmlProcessesFn>(m_api->processes);
  std::array<NvmlProcessInfo, 256> infos{};
  for (NvmlDevice device : m_api->devices) {
    unsigned int n = infos.size();
    if (processes(device, &n, infos.data()) != kNvmlSuccess) {
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

}  // namespace gb10tune::platform
