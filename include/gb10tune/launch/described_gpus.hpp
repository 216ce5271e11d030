// The GPUs of a described machine (gb10tune plan --machine FILE.json, its "gpus" list): read
// strictly from the description, and answered to launch's planner as the CUDA runtime and NVML
// answer for a machine that has them, so that a plan places layers on them as launch would.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// One described GPU.
struct DescribedGpu {
  std::string name;                       // "NVIDIA GeForce RTX 4090"
  std::uint64_t memory_bytes = 0;         // its own memory, free for the server; 0 if integrated
  double bandwidth_bytes_per_second = 0;  // 0 = not given
  bool integrated = false;                // shares the host's memory (one pool, K19)
};

// The "gpus" list of description `file`: each entry an object with "name" (a non-empty
// string), "memory_gb" (a number of GB above 0; required for a discrete GPU, refused for an
// integrated one, which has no memory of its own), "bandwidth_gbps" (above 0) and "integrated"
// (a boolean, default false); an integrated GPU must be the only one. A usage Error naming the
// file, the entry (gpus[i]) and the key otherwise.
Expected<std::vector<DescribedGpu>> read_described_gpus(const nlohmann::json& list,
                                                        std::string_view file);

// The PCI bus id the described machine gives its GPU number `index` (0000:01:00.0 for the
// first), the same in its driver entries and its device list.
std::string described_pci_bus_id(std::size_t index);

// The devices of a described machine with discrete GPUs, as the CUDA runtime and NVML list
// them on that machine, idle: each GPU's memory free of the same total.
class DescribedGpuBackend final : public gpu::GpuBackend {
 public:
  explicit DescribedGpuBackend(std::vector<DescribedGpu> gpus) : m_gpus(std::move(gpus)) {}
  gpu::GpuReport query_devices() override;
  gpu::NvmlReport query_nvml() override;

 private:
  std::vector<DescribedGpu> m_gpus;
};

}  // namespace gb10tune::launch
