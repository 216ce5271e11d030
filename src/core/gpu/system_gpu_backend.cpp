#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/platform/cuda_devices.hpp"
#include "gb10tune/platform/nvml.hpp"

namespace gb10tune::gpu {

namespace {

class SystemBackend final : public GpuBackend {
 public:
  GpuReport query_devices() override { return platform::query_cuda_devices(); }
  NvmlReport query_nvml() override { return platform::query_nvml(); }
  std::optional<std::uint64_t> process_gpu_bytes(std::uint32_t pid) override {
    if (!m_session) {
      m_session = std::make_unique<platform::NvmlSession>();
    }
    return m_session->process_bytes(pid);
  }

 private:
  std::unique_ptr<platform::NvmlSession> m_session;  // loaded at the first per-process query
};

}  // namespace

std::unique_ptr<GpuBackend> make_system_backend() {
  return std::make_unique<SystemBackend>();
}

}  // namespace gb10tune::gpu
