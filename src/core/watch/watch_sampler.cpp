#include "gb10tune/watch/watch_sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "gb10tune/platform/nvml.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::watch {

MemInfoSource meminfo_from(platform::Sysroot root) {
  return [root = std::move(root)] { return sys::read_meminfo(root); };
}

MemInfoSource meminfo_sequence(std::vector<std::filesystem::path> files) {
  auto next = std::make_shared<std::size_t>(0);
  return [files = std::move(files), next]() -> Expected<sys::MemInfo> {
    if (files.empty()) {
      return Error{"no meminfo files to replay"};
    }
    const std::filesystem::path& path = files[std::min(*next, files.size() - 1)];
    ++*next;
    const auto text = read_text_file(path);
    if (!text) {
      return Error{fmt::format("cannot read {}", path.string())};
    }
    return sys::parse_meminfo(*text, path.string());
  };
}

Expected<MemInfoSource> meminfo_replay(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    files.push_back(entry.path());
  }
  if (ec || files.empty()) {
    return Error{"--replay-meminfo " + dir.string() + " holds no files", ExitCode::usage};
  }
  std::sort(files.begin(), files.end());
  return meminfo_sequence(std::move(files));
}

GpuSources gpu_sources(gpu::GpuBackend* backend, const platform::Sysroot& root,
                       const platform::Environment& env) {
  const bool chosen = platform::nvml_library(env) != platform::kNvmlDefaultLibrary;
  if (backend == nullptr || (sys::nvidia_gpu_count(root) == 0 && !chosen)) {
    return {};
  }
  return {
      [backend](int pid) { return backend->process_gpu_bytes(static_cast<std::uint32_t>(pid)); },
      [backend] { return backend->gpu_readings(); }};
}

Sampler::Sampler(platform::Sysroot root, MemInfoSource meminfo, GpuBytesSource gpu,
                 GpuReadingsSource readings)
    : m_root(std::move(root)),
      m_meminfo(std::move(meminfo)),
      m_gpu(std::move(gpu)),
      m_readings(std::move(readings)) {}

std::vector<gpu::GpuReading> Sampler::gpus() const {
  return m_readings ? m_readings() : std::vector<gpu::GpuReading>{};
}

bool Sampler::running(const WatchedProcess& server) const {
  if (server.pid <= 0) {
    return false;
  }
  const auto stat = sys::read_process_stat(m_root, server.pid);
  return stat && !stat->exited() &&
         (server.start_time_ticks == 0 || stat->start_time_ticks == server.start_time_ticks);
}

Expected<Sample> Sampler::take(double t_s, const WatchedProcess& server) const {
  const auto memory = m_meminfo();
  if (!memory) {
    return memory.error();
  }
  Sample sample;
  sample.t_s = t_s;
  sample.available_bytes = memory->available_bytes;
  sample.swap_total_bytes = memory->swap_total_bytes;
  sample.swap_used_bytes =
      memory->swap_total_bytes - std::min(memory->swap_free_bytes, memory->swap_total_bytes);
  sample.gpus = gpus();
  sample.server_running = running(server);
  if (sample.server_running) {
    if (const auto rss = sys::read_process_memory(m_root, server.pid)) {
      sample.server_rss_bytes = rss->vm_rss;
    }
    if (m_gpu) {
      sample.server_gpu_bytes = m_gpu(server.pid);
    }
  }
  return sample;
}

}  // namespace gb10tune::watch
