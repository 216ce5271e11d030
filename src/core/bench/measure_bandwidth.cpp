#include "gb10tune/bench/measure_bandwidth.hpp"

#include <fmt/format.h>

#include "gb10tune/sys/meminfo.hpp"
#include "gb10tune/sys/process_info.hpp"

namespace gb10tune::bench {

Expected<BandwidthRun> measure_bandwidth(const BandwidthOptions& options,
                                         std::optional<double> peak_override,
                                         const BandwidthEnvironment& environment) {
  const gpu::GpuReport gpus = environment.gpu->query_devices();
  if (gpus.status != gpu::GpuStatus::available) {
    return Error{fmt::format("gb10tune bench: {}", gpu::no_gpu_reason(gpus)), ExitCode::no_gpu};
  }
  if (options.device < 0 || options.device >= static_cast<int>(gpus.devices.size())) {
    return Error{fmt::format("--cuda-device {} does not exist: this machine has {} CUDA device(s), "
                             "numbered from 0",
                             options.device, gpus.devices.size()),
                 ExitCode::usage};
  }
  const gpu::GpuDevice& device = gpus.devices[static_cast<std::size_t>(options.device)];

  std::optional<std::uint64_t> mem_available;
  if (const auto memory = sys::read_meminfo(*environment.sysroot)) {
    mem_available = memory->available_bytes;
  }
  auto plan = plan_bandwidth(device, options, mem_available);
  if (!plan) {
    return Error{plan.error().message, ExitCode::usage};
  }
  if (!mem_available) {
    plan->notes.push_back("/proc/meminfo could not be read: host-memory cases are waived");
  }

  BandwidthInputs inputs;
  inputs.device = device;
  inputs.plan = std::move(*plan);
  inputs.peak_override = peak_override;
  // Only a running server contends: a zombie left right after `stop` holds nothing.
  for (const sys::ServerCandidate& server : sys::find_running_servers(*environment.sysroot)) {
    inputs.server_pids.push_back(server.stat.pid);
  }
  inputs.runner = environment.runner;
  inputs.progress = environment.progress;
  inputs.cancel = environment.cancel;
  return run_bandwidth(inputs);
}

}  // namespace gb10tune::bench
