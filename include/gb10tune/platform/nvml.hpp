// NVML, loaded at run time with dlopen (libnvidia-ml.so.1 ships with the driver, not with
// the toolkit): driver version, per-process GPU memory, and each GPU's sensors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/gpu_facts.hpp"

namespace gb10tune::platform {

// The library dlopen looks up by default: the driver's, found through the loader's path.
inline constexpr std::string_view kNvmlDefaultLibrary = "libnvidia-ml.so.1";
// The variable naming another NVML library (a path, for an unusual install or a test's
// stand-in); unset or empty: kNvmlDefaultLibrary.
inline constexpr std::string_view kNvmlLibraryVariable = "GB10TUNE_NVML_LIBRARY";

// The library NVML is loaded from under `env`: kNvmlLibraryVariable's value when set and not
// empty, else kNvmlDefaultLibrary. Never fails (a wrong name fails at load, in the report).
std::string nvml_library(const Environment& env);

// Loads NVML from `library`, reads the driver version and the compute processes of every
// device, and unloads it. A missing library or a failing call is reported in the result (its
// detail names the library), never thrown.
NvmlReport query_nvml(const std::string& library = std::string(kNvmlDefaultLibrary));

// NVML kept loaded and initialised for repeated queries (a watch asking every second:
// nvmlInit alone can take tens of milliseconds). The entry points are resolved once, at
// construction. Not copyable; shuts NVML down and unloads it on destruction.
class NvmlSession {
 public:
  // Loads and initialises NVML from `library`; usable() tells whether that worked.
  explicit NvmlSession(const std::string& library = std::string(kNvmlDefaultLibrary));
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;
  ~NvmlSession();

  bool usable() const { return m_usable; }
  // The memory NVML accounts to `pid` over all devices (0: listed nowhere); nullopt when the
  // session is not usable or every device query failed.
  std::optional<std::uint64_t> process_bytes(std::uint32_t pid) const;
  // Each device's sensors now, in NVML's index order; a figure the device does not report
  // (or whose entry point the library lacks) is nullopt. Empty when the session is not usable.
  std::vector<GpuReading> readings() const;

 private:
  struct Api;
  Api* m_api = nullptr;
  bool m_usable = false;
};

}  // namespace gb10tune::platform
