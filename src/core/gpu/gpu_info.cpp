#include "gb10tune/gpu/gpu_info.hpp"

#include <fmt/format.h>

#include <array>

namespace gb10tune::gpu {

namespace {

struct NominalBandwidth {
  std::string_view name_part;  // matched against the device name; more specific rows first
  double bytes_per_second;
};

// Vendor datasheet figures. Rows whose name is a prefix of another's come after it.
constexpr std::array kNominal{
    NominalBandwidth{"GB10", 273e9},         NominalBandwidth{"GB200", 8.0e12},
    NominalBandwidth{"B200", 8.0e12},        NominalBandwidth{"H200", 4.8e12},
    NominalBandwidth{"H100 PCIe", 2.0e12},   NominalBandwidth{"H100 NVL", 3.9e12},
    NominalBandwidth{"H100", 3.35e12},       NominalBandwidth{"H20", 4.0e12},
    NominalBandwidth{"GH200", 4.0e12},       NominalBandwidth{"A100-SXM4-80GB", 2.039e12},
    NominalBandwidth{"A100 80GB", 1.935e12}, NominalBandwidth{"A100", 1.555e12},
    NominalBandwidth{"L40S", 864e9},         NominalBandwidth{"L40", 864e9},
    NominalBandwidth{"L4", 300e9},           NominalBandwidth{"RTX PRO 6000", 1.792e12},
    NominalBandwidth{"RTX 6000 Ada", 960e9}, NominalBandwidth{"RTX 5090", 1.792e12},
    NominalBandwidth{"RTX 4090", 1.008e12},  NominalBandwidth{"RTX 3090", 936e9},
    NominalBandwidth{"Thor", 273e9},         NominalBandwidth{"Orin", 204.8e9},
};

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

GpuKind classify(const GpuDevice& device) {
  if (contains(device.name, "GB10") ||
      (device.integrated && device.cc_major == 12 && device.cc_minor == 1)) {
    return GpuKind::gb10;
  }
  return device.integrated ? GpuKind::integrated : GpuKind::discrete;
}

std::string_view describe(GpuKind kind) {
  switch (kind) {
    case GpuKind::gb10:
      return "GB10 (integrated, unified memory)";
    case GpuKind::integrated:
      return "integrated GPU (unified memory)";
    case GpuKind::discrete:
      return "discrete GPU";
  }
  return "unknown";
}

std::string_view to_string(GpuStatus status) {
  switch (status) {
    case GpuStatus::available:
      return "available";
    case GpuStatus::no_device:
      return "no-device";
    case GpuStatus::no_driver:
      return "no-driver";
    case GpuStatus::built_without_cuda:
      return "built-without-cuda";
    case GpuStatus::error:
      return "error";
  }
  return "error";
}

std::string no_gpu_reason(const GpuReport& report) {
  switch (report.status) {
    case GpuStatus::available:
      return {};
    case GpuStatus::no_device:
      return "no GPU: the NVIDIA driver reports no CUDA device";
    case GpuStatus::no_driver:
      return fmt::format("no GPU: no usable NVIDIA driver ({})", report.detail);
    case GpuStatus::built_without_cuda:
      return "no GPU: not available: built without CUDA";
    case GpuStatus::error:
      return fmt::format("no GPU: the CUDA runtime failed ({})", report.detail);
  }
  return "no GPU";
}

namespace {

const NominalBandwidth* table_row(const GpuDevice& device) {
  for (const NominalBandwidth& row : kNominal) {
    if (contains(device.name, row.name_part)) {
      return &row;
    }
  }
  return nullptr;
}

double clock_bandwidth(const GpuDevice& device) {
  if (device.memory_clock_khz <= 0 || device.memory_bus_width_bits <= 0) {
    return 0.0;
  }
  // Double data rate: two transfers per clock.
  return 2.0 * device.memory_clock_khz * 1e3 * (device.memory_bus_width_bits / 8.0);
}

}  // namespace

double nominal_bandwidth(const GpuDevice& device) {
  const NominalBandwidth* row = table_row(device);
  return row != nullptr ? row->bytes_per_second : clock_bandwidth(device);
}

std::string_view nominal_bandwidth_source(const GpuDevice& device) {
  if (table_row(device) != nullptr) {
    return "table";
  }
  return clock_bandwidth(device) > 0 ? "memory clock x bus width" : "unknown";
}

std::string cuda_architecture(const GpuDevice& device) {
  const int arch = device.cc_major * 10 + device.cc_minor;
  return device.cc_major >= 12 ? fmt::format("{}a-real", arch) : fmt::format("{}-real", arch);
}

std::string format_cuda_version(int version) {
  if (version <= 0) {
    return {};
  }
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

}  // namespace gb10tune::gpu
