#include "gb10tune/platform/cuda_devices.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace gb10tune::platform {

namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
    return 0;
  }
  return value;
}

GpuStatus status_of(cudaError_t error) {
  switch (error) {
    case cudaErrorNoDevice:
      return GpuStatus::no_device;
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
      return GpuStatus::no_driver;
    default:
      return GpuStatus::error;
  }
}

}  // namespace

GpuReport query_cuda_devices() {
  GpuReport report;
  cudaRuntimeGetVersion(&report.runtime_version);
  cudaDriverGetVersion(&report.driver_cuda_version);  // 0 when no driver is installed

  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    report.status = error == cudaSuccess ? GpuStatus::no_device : status_of(error);
    report.detail = error == cudaSuccess
                        ? "the driver reports 0 devices"
                        : fmt::format("{}: {}", cudaGetErrorName(error), cudaGetErrorString(error));
    cudaGetLastError();  // clear the sticky error for later calls
    return report;
  }

  report.status = GpuStatus::available;
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    GpuDevice device;
    device.index = index;
    device.name = prop.name;
    device.cc_major = prop.major;
    device.cc_minor = prop.minor;
    device.sm_count = prop.multiProcessorCount;
    device.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
    device.total_memory_bytes = prop.totalGlobalMem;
    device.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, index);
    device.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index);
    device.integrated = attribute(cudaDevAttrIntegrated, index) != 0;
    device.managed_memory = attribute(cudaDevAttrManagedMemory, index) != 0;
    device.concurrent_managed_access = attribute(cudaDevAttrConcurrentManagedAccess, index) != 0;
    device.pageable_memory_access = attribute(cudaDevAttrPageableMemoryAccess, index) != 0;
    device.pageable_memory_access_uses_host_page_tables =
        attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables, index) != 0;
    device.pci_bus_id =
        fmt::format("{:04x}:{:02x}:{:02x}.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    report.devices.push_back(std::move(device));
  }
  if (report.devices.empty()) {
    report.status = GpuStatus::error;
    report.detail = "cudaGetDeviceProperties failed for every device";
  }
  return report;
}

}  // namespace gb10tune::platform
