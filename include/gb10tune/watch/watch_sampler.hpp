// The sampling half of `gb10tune watch`: MemAvailable, the watched server's liveness, RSS and
// NVML figure, and each GPU's sensors, read under a Sysroot so that tests replay a /proc tree
// that changes over time. Cheap enough to run every second: three small /proc reads and a few
// calls into an NVML kept loaded, no process started.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "gb10tune/util/expected.hpp"
#include "gb10tune/watch/watch_policy.hpp"

namespace gb10tune::watch {

// Where MemAvailable comes from.
using MemInfoSource = std::function<Expected<sys::MemInfo>()>;

// /proc/meminfo under `root`, read afresh at every call.
MemInfoSource meminfo_from(platform::Sysroot root);

// The files in order, one per call, the last one repeated once they are used up (for tests and
// `--replay-meminfo`): an Error naming the file when one cannot be read or parsed.
MemInfoSource meminfo_sequence(std::vector<std::filesystem::path> files);

// meminfo_sequence over the files of `dir` in name order (`--replay-meminfo DIR`). A usage
// Error naming the folder when it cannot be listed or holds no files.
Expected<MemInfoSource> meminfo_replay(const std::filesystem::path& dir);

// The memory NVML accounts to a pid (nullopt: no NVML, or no figure).
using GpuBytesSource = std::function<std::optional<std::uint64_t>(int pid)>;

// Each GPU's sensors now (empty: no NVML).
using GpuReadingsSource = std::function<std::vector<gpu::GpuReading>()>;

// What the watch asks NVML every sample: the server's memory and each GPU's sensors.
struct GpuSources {
  GpuBytesSource process_bytes;
  GpuReadingsSource readings;
};

// `backend`'s NVML figures where this machine (under `root`) has an NVIDIA GPU, or where `env`
// names an NVML library (platform::kNvmlLibraryVariable: an unusual install, a test's
// stand-in); both empty otherwise or without a backend. `backend` must outlive the sources.
GpuSources gpu_sources(gpu::GpuBackend* backend, const platform::Sysroot& root,
                       const platform::Environment& env);

// The process being watched: a pid and its start time (so that a reused pid is not taken for
// the server). pid 0: none.
struct WatchedProcess {
  int pid = 0;
  std::uint64_t start_time_ticks = 0;
};

// Takes samples.
class Sampler {
 public:
  // `gpu` and `readings` may be empty (no GPU on this machine).
  Sampler(platform::Sysroot root, MemInfoSource meminfo, GpuBytesSource gpu,
          GpuReadingsSource readings = {});

  // One sample at `t_s`: MemAvailable, swap, each GPU's sensors, and whether `server` still
  // runs (its /proc/<pid>/stat exists, is not a zombie, and has the recorded start time) with
  // its VmRSS and GPU figure. An Error only when MemAvailable cannot be read.
  Expected<Sample> take(double t_s, const WatchedProcess& server) const;

  // True when `server` runs (the liveness part of take()).
  bool running(const WatchedProcess& server) const;

  // Each GPU's sensors now (the GPU part of take()); empty without a readings source.
  std::vector<gpu::GpuReading> gpus() const;

 private:
  platform::Sysroot m_root;
  MemInfoSource m_meminfo;
  GpuBytesSource m_gpu;
  GpuReadingsSource m_readings;
};

}  // namespace gb10tune::watch
