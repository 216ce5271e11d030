// A described machine's GPUs: the "gpus" list read strictly, and the device list launch's
// planner asks for.
#include "gb10tune/launch/described_gpus.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "gb10tune/launch/target_machine.hpp"
#include "gb10tune/util/json_field.hpp"

namespace gb10tune::launch {

namespace {

// A number above 0 (and below a million) from `key` of `entry`, scaled by 1e9.
Expected<double> positive_giga(const nlohmann::json& entry, const char* key,
                               const std::string& where, std::string_view file) {
  double value = 0;
  std::string error;
  if (!get_field(entry, key, value, error)) {
    return machine_description_error(file, where + ": " + error);
  }
  if (!(value > 0) || value > 1e6) {
    return machine_description_error(file,
                                     fmt::format("{}: '{}' must be a number above 0", where, key));
  }
  return value * 1e9;
}

Expected<DescribedGpu> read_gpu(const nlohmann::json& entry, std::size_t index,
                                std::string_view file) {
  const std::string where = fmt::format("gpus[{}]", index);
  if (!entry.is_object()) {
    return machine_description_error(file, where + " is not an object");
  }
  static const std::set<std::string> known{"name", "memory_gb", "bandwidth_gbps", "integrated"};
  for (const auto& item : entry.items()) {
    if (!known.contains(item.key())) {
      return machine_description_error(
          file, fmt::format("{}: unknown field '{}' (a GPU's fields: name, memory_gb, "
                            "bandwidth_gbps, integrated)",
                            where, item.key()));
    }
  }
  DescribedGpu gpu;
  std::string error;
  if (!get_field(entry, "name", gpu.name, error) || gpu.name.empty()) {
    return machine_description_error(
        file, where + ": " + (error.empty() ? "'name' must not be empty" : error));
  }
  if (entry.contains("integrated") && !get_field(entry, "integrated", gpu.integrated, error)) {
    return machine_description_error(file, where + ": " + error);
  }
  if (gpu.integrated && entry.contains("memory_gb")) {
    return machine_description_error(
        file, where +
                  ": an integrated GPU has no memory of its own (it shares memory_gb with "
                  "the CPU); leave out its 'memory_gb'");
  }
  if (!gpu.integrated) {
    const auto memory = positive_giga(entry, "memory_gb", where, file);
    if (!memory) {
      return memory.error();
    }
    gpu.memory_bytes = static_cast<std::uint64_t>(std::llround(*memory));
  }
  if (entry.contains("bandwidth_gbps")) {
    const auto bandwidth = positive_giga(entry, "bandwidth_gbps", where, file);
    if (!bandwidth) {
      return bandwidth.error();
    }
    gpu.bandwidth_bytes_per_second = *bandwidth;
  }
  return gpu;
}

}  // namespace

Expected<std::vector<DescribedGpu>> read_described_gpus(const nlohmann::json& list,
                                                        std::string_view file) {
  if (!list.is_array() || list.empty()) {
    return machine_description_error(file, "'gpus' must be a list of one GPU object or more");
  }
  std::vector<DescribedGpu> gpus;
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto gpu = read_gpu(list[i], i, file);
    if (!gpu) {
      return gpu.error();
    }
    gpus.push_back(std::move(*gpu));
  }
  if (gpus.size() > 1 &&
      std::any_of(gpus.begin(), gpus.end(), [](const DescribedGpu& g) { return g.integrated; })) {
    return machine_description_error(
        file,
        "an integrated GPU must be the only one in 'gpus' (it is the machine's one pool "
        "of memory)");
  }
  return gpus;
}

std::string described_pci_bus_id(std::size_t index) {
  return fmt::format("0000:{:02x}:00.0", index + 1);
}

gpu::GpuReport DescribedGpuBackend::query_devices() {
  gpu::GpuReport report;
  report.status = m_gpus.empty() ? gpu::GpuStatus::no_device : gpu::GpuStatus::available;
  for (std::size_t i = 0; i < m_gpus.size(); ++i) {
    gpu::GpuDevice device;
    device.index = static_cast<int>(i);
    device.name = m_gpus[i].name;
    device.total_memory_bytes = m_gpus[i].memory_bytes;
    device.integrated = m_gpus[i].integrated;
    device.pci_bus_id = described_pci_bus_id(i);
    report.devices.push_back(std::move(device));
  }
  return report;
}

gpu::NvmlReport DescribedGpuBackend::query_nvml() {
  gpu::NvmlReport nvml;
  nvml.loaded = true;
  nvml.detail = "the machine description";
  for (std::size_t i = 0; i < m_gpus.size(); ++i) {
    nvml.memory.push_back({static_cast<int>(i), described_pci_bus_id(i), m_gpus[i].memory_bytes,
                           m_gpus[i].memory_bytes});
  }
  return nvml;
}

}  // namespace gb10tune::launch
