// NVML, loaded at run time with dlopen (libnvidia-ml.so.1 ships with the driver, not with
// the toolkit): driver version and per-process GPU memory.
#pragma once

#include <cstdint>
#include <optional>

#include "gb10tune/platform/gpu_facts.hpp"

namespace gb10tune::platform {

// Loads NVML, reads the driver version and the compute processes of every device, and
// unloads it. A missing library or a failing call is reported in the result, never thrown.
NvmlReport query_nvml();

// NVML kept loaded and initialised for repeated per-process queries (a watch asking every
// second: nvmlInit alone can take tens of milliseconds). Not copyable; shuts NVML down and
// unloads it on destruction.
class NvmlSession {
 public:
  // Loads and initialises NVML; usable() tells whether that worked.
  NvmlSession();
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;
  ~NvmlSession();

  bool usable() const { return m_usable; }
  // The memory NVML accounts to `pid` over all devices (0: listed nowhere); nullopt when the
  // session is not usable or every device query failed.
  std::optional<std::uint64_t> process_bytes(std::uint32_t pid) const;

 private:
  struct Api;
  Api* m_api = nullptr;
  bool m_usable = false;
};

}  // namespace gb10tune::platform
