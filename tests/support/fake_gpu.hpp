// A GpuBackend that answers from data, for tests: the GPU of each fixture machine.
#pragma once

#include <string_view>

#include "gb10tune/gpu/gpu_backend.hpp"

namespace gb10tune::testing {

class FakeGpuBackend final : public gpu::GpuBackend {
 public:
  FakeGpuBackend(gpu::GpuReport devices, gpu::NvmlReport nvml)
      : m_devices(std::move(devices)), m_nvml(std::move(nvml)) {}
  gpu::GpuReport query_devices() override { return m_devices; }
  gpu::NvmlReport query_nvml() override { return m_nvml; }

 private:
  gpu::GpuReport m_devices;
  gpu::NvmlReport m_nvml;
};

// NVIDIA GB10 as the CUDA 13 runtime reports it (integrated, cc 12.1, 48 SMs).
gpu::GpuDevice gb10_device();
// NVIDIA H200 (discrete, cc 9.0, 132 SMs, 141 GB HBM3e).
gpu::GpuDevice h200_device();
// NVIDIA GeForce RTX 4090 (discrete, cc 8.9).
gpu::GpuDevice rtx4090_device();

// The GPU side of a fixture machine: "gb10", "x86-discrete", "dgpu-24g" and "dgpu-2x" (one or
// two 24 GB GPUs, 24.9 GB free each, NVML loaded), "verify-dgpu" (dgpu-2x serving: NVML lists
// its llama-server, pid 4242, with 10 GiB on CUDA0 and 9 GiB on CUDA1), "no-gpu", "arm-nosve2",
// "malformed", and the GB10 "verify-*" machines (NVML lists their llama-server, pid 4242, on
// verify-managed and verify-clean). Unknown names get "no driver".
FakeGpuBackend fake_gpu_for(std::string_view scenario);

}  // namespace gb10tune::testing
