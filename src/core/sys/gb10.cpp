#include "gb10tune/sys/gb10.hpp"

#include "gb10tune/sys/cpuinfo.hpp"

namespace gb10tune::sys {

bool is_gb10_machine(const platform::Sysroot& root) {
  if (const auto gpus = root.list_dir("/proc/driver/nvidia/gpus")) {
    for (const auto& bus : *gpus) {
      const auto info = root.read_file("/proc/driver/nvidia/gpus/" + bus + "/information");
      if (info && info->find("GB10") != std::string::npos) {
        return true;
      }
    }
    if (!gpus->empty()) {
      return false;  // the driver names its GPUs, and none is a GB10
    }
  }
  const auto cpu = read_cpuinfo(root);
  if (!cpu) {
    return false;
  }
  bool x925 = false;
  bool a725 = false;
  for (const auto& cluster : cpu->clusters) {
    x925 = x925 || cluster.name == "Cortex-X925";
    a725 = a725 || cluster.name == "Cortex-A725";
  }
  return x925 && a725;
}

std::size_t nvidia_gpu_count(const platform::Sysroot& root) {
  const auto gpus = root.list_dir("/proc/driver/nvidia/gpus");
  return gpus ? gpus->size() : 0;
}

}  // namespace gb10tune::sys
