#include "support/fake_gpu.hpp"

namespace gb10tune::testing {

gpu::GpuDevice gb10_device() {
  gpu::GpuDevice d;
  d.name = "NVIDIA GB10";
  d.cc_major = 12;
  d.cc_minor = 1;
  d.sm_count = 48;
  d.l2_bytes = 24ull << 20;
  d.total_memory_bytes = 128526036992ull;
  d.integrated = true;
  d.managed_memory = true;
  d.concurrent_managed_access = true;
  d.pageable_memory_access = true;
  d.pageable_memory_access_uses_host_page_tables = true;
  d.pci_bus_id = "000f:01:00.0";
  return d;
}

gpu::GpuDevice h200_device() {
  gpu::GpuDevice d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 60ull << 20;
  d.total_memory_bytes = 150754820096ull;
  d.memory_clock_khz = 3201000;
  d.memory_bus_width_bits = 6144;
  d.managed_memory = true;
  d.concurrent_managed_access = true;
  d.pci_bus_id = "0000:19:00.0";
  return d;
}

gpu::GpuDevice rtx4090_device() {
  gpu::GpuDevice d;
  d.name = "NVIDIA GeForce RTX 4090";
  d.cc_major = 8;
  d.cc_minor = 9;
  d.sm_count = 128;
  d.l2_bytes = 72ull << 20;
  d.total_memory_bytes = 25393692672ull;
  d.memory_clock_khz = 10501000;
  d.memory_bus_width_bits = 384;
  d.managed_memory = true;
  d.concurrent_managed_access = true;
  d.pci_bus_id = "0000:01:00.0";
  return d;
}

FakeGpuBackend fake_gpu_for(std::string_view scenario) {
  gpu::GpuReport report;
  gpu::NvmlReport nvml;
  report.runtime_version = 13000;
  // verify-cpu-only is a machine without an NVIDIA driver, like the one the real CPU build of
  // llama-server was captured on.
  const bool verify_machine = scenario.substr(0, 7) == "verify-" && scenario != "verify-cpu-only";
  if (scenario == "dgpu-24g" || scenario == "dgpu-2x" || scenario == "verify-dgpu") {
    // x86 hosts with 128 GB of RAM and one or two 24 GB discrete GPUs, idle: NVML reports
    // 24.9 GB free of each.
    report.status = gpu::GpuStatus::available;
    report.driver_cuda_version = 13000;
    nvml.loaded = true;
    nvml.detail = "libnvidia-ml.so.1";
    nvml.driver_version = "580.95.05";
    const int count = scenario == "dgpu-24g" ? 1 : 2;
    // verify-dgpu runs a CUDA llama-server (pid 4242) split over both GPUs: NVML lists it on
    // each with 10 GiB (CUDA0) and 9 GiB (CUDA1).
    const bool serving = scenario == "verify-dgpu";
    for (int i = 0; i < count; ++i) {
      gpu::GpuDevice d = rtx4090_device();
      d.index = i;
      d.pci_bus_id = i == 0 ? "0000:01:00.0" : "0000:02:00.0";
      const std::uint64_t used = serving ? (i == 0 ? 10ull << 30 : 9ull << 30) : 0;
      const std::uint64_t idle_free = 24'900'000'000ull;
      nvml.memory.push_back({i, d.pci_bus_id, d.total_memory_bytes, idle_free - used});
      if (serving) {
        nvml.processes.push_back({i, 4242, used});
      }
      report.devices.push_back(std::move(d));
    }
  } else if (scenario == "gb10" || scenario == "x86-discrete" || verify_machine) {
    report.status = gpu::GpuStatus::available;
    report.driver_cuda_version = 13000;
    report.devices.push_back(scenario == "x86-discrete" ? rtx4090_device() : gb10_device());
    nvml.loaded = true;
    nvml.detail = "libnvidia-ml.so.1";
    nvml.driver_version = "580.95.05";
    // The llama-server (pid 4242) of the verify machines as NVML accounts it (K3): ~300 MiB on
    // the managed path, ~58 GB on the device path.
    if (scenario == "verify-managed") {
      nvml.processes.push_back({0, 4242, 300ull << 20});
    } else if (scenario == "verify-clean") {
      nvml.processes.push_back({0, 4242, 58'000'000'000ull});
    }
  } else {
    report.status = gpu::GpuStatus::no_driver;
    report.detail =
        "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA "
        "runtime version";
    nvml.detail =
        "NVML not loaded: libnvidia-ml.so.1: cannot open shared object file: No such "
        "file or directory";
  }
  return FakeGpuBackend(std::move(report), std::move(nvml));
}

}  // namespace gb10tune::testing
