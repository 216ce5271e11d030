#include "gb10tune/render/gpu_json.hpp"

#include <fmt/format.h>

namespace gb10tune::render {

namespace {

std::string_view kind_id(gpu::GpuKind kind) {
  switch (kind) {
    case gpu::GpuKind::gb10:
      return "gb10";
    case gpu::GpuKind::integrated:
      return "integrated";
    case gpu::GpuKind::discrete:
      return "discrete";
  }
  return "discrete";
}

}  // namespace

nlohmann::json gpu_device_to_json(const gpu::GpuDevice& d) {
  const gpu::GpuKind kind = gpu::classify(d);
  return {{"index", d.index},
          {"name", d.name},
          {"kind", kind_id(kind)},
          {"class", gpu::describe(kind)},
          {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
          {"sm_count", d.sm_count},
          {"l2_bytes", d.l2_bytes},
          {"total_memory_bytes", d.total_memory_bytes},
          {"memory_clock_khz", d.memory_clock_khz},
          {"memory_bus_width_bits", d.memory_bus_width_bits},
          {"nominal_bandwidth_bytes_per_second", gpu::nominal_bandwidth(d)},
          {"integrated", d.integrated},
          {"managed_memory", d.managed_memory},
          {"concurrent_managed_access", d.concurrent_managed_access},
          {"pageable_memory_access", d.pageable_memory_access},
          {"pageable_memory_access_uses_host_page_tables",
           d.pageable_memory_access_uses_host_page_tables},
          {"pci_bus_id", d.pci_bus_id},
          {"cuda_architecture", gpu::cuda_architecture(d)}};
}

}  // namespace gb10tune::render
