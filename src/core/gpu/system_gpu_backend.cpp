#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/platform/cuda_devices.hpp"
#include "gb10tune/platform/nvml.hpp"

namespace gb10tune::gpu {

namespace {

class SystemBackend final : public GpuBackend {
 public:
  explicit SystemBackend(std::string nvml_library) : m_library(std::move(nvml_library)) {}
  GpuReport query_devices() override { return platform::query_cuda_devices(); }
  NvmlReport query_nvml() override { return platform::query_nvml(m_library); }
  std::optional<std::uint64_t> process_gpu_bytes(std::uint32_t pid) override {
    return session().process_bytes(pid);
  }
  std::vector<GpuReading> gpu_readings() override { return session().readings(); }

 private:
  // NVML kept loaded from the first per-second query on.
  const platform::NvmlSession& session() {
    if (!m_session) {
      m_session = std::make_unique<platform::NvmlSession>(m_library);
    }
    return *m_session;
  }

  std::string m_library;
  std::unique_ptr<platform::NvmlSession> m_session;
};

}  // namespace

std::unique_ptr<GpuBackend> make_system_backend(std::string nvml_library) {
  return std::make_unique<SystemBackend>(std::move(nvml_library));
}

}  // namespace gb10tune::gpu
