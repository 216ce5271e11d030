#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/plan/calibration.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/verify/checks.hpp"

namespace gb10tune::verify {

namespace {

constexpr std::uint64_t kLargeRss = 10'000'000'000ULL;  // "RSS over 10 GB" (K3)
constexpr std::uint64_t kSmallGpu = 1ULL << 30;         // "under 1 GiB" (K3)

// The process's memory against the plan, like with like (see check_memory).
Finding plan_vs_measured(const ProcessSnapshot& snapshot, const gpu::NvmlReport& nvml,
                         const Expectations& expected) {
  Finding finding;
  finding.id = "plan-vs-measured";
  finding.fact = "K13";
  finding.summary = "the memory plan matches the process";
  const std::uint64_t planned = *expected.load_bytes;
  const auto backend =
      expected.backend == "cuda" ? plan::PlanBackend::cuda : plan::PlanBackend::cpu;
  const plan::ProcessReading reading =
      plan::process_reading(*snapshot.memory, nvml, snapshot.process.stat.pid);
  plan::MemoryPlan weights;
  weights.weights_bytes = expected.weights_bytes.value_or(0);
  const plan::Measurement m = plan::measure(weights, backend, reading);
  if (!m.measured_bytes) {
    finding.severity = Severity::warn;
    finding.evidence = fmt::format("plan at load {} ({}); measured unknown: {}",
                                   format_bytes(planned), expected.backend, m.unknown_because);
    finding.fix = "install the NVIDIA driver's NVML (libnvidia-ml.so.1) to measure a CUDA server";
    return finding;
  }
  if (expected.plan_estimate) {
    // An estimate (weights + --overhead) of an architecture without layer rules: report the
    // measurement, judge nothing.
    finding.severity = Severity::warn;
    finding.summary = "the memory plan was an estimate: unknown whether it matches";
    finding.evidence = fmt::format(
        "launch planned an architecture it has no layer rules for (--force --overhead): "
        "weights and runtime {}, the KV cache, state and buffers not modelled (left to "
        "--overhead); measured {} ({})",
        format_bytes(planned), format_bytes(*m.measured_bytes), m.how);
    finding.fix = "keep --overhead above what the process holds beyond its weights";
    return finding;
  }
  plan::ExpectedMemory memory;
  memory.on_demand = std::min(expected.on_demand_bytes.value_or(0), planned);
  memory.at_load = planned - memory.on_demand;
  memory.prompt_cache = expected.cache_ram_bytes;
  const plan::MemoryJudgement judged = plan::judge_memory(
      memory, *m.measured_bytes, reading.vm_hwm, m.how,
      expected.projector_bytes > 0
          ? fmt::format(" (the projector's weights and compute buffer {} included)",
                        format_bytes(expected.projector_bytes))
          : std::string());
  finding.evidence = judged.evidence;
  finding.summary = std::string(plan::memory_verdict_summary(judged.verdict));
  switch (judged.verdict) {
    case plan::MemoryVerdict::matches:
      break;
    case plan::MemoryVerdict::above:
      finding.severity = Severity::warn;
      finding.fix =
          "raise --overhead by the difference and launch again (launch learns a calibration "
          "only from runs within 5% of the plan)";
      break;
    case plan::MemoryVerdict::below:
      finding.severity = Severity::warn;
      if (!expected.on_demand_bytes && backend == plan::PlanBackend::cpu) {
        finding.evidence +=
            "; the launch record (an older gb10tune) does not say which part of the plan a CPU "
            "server touches only as batches use it (its compute buffers)";
      }
      finding.fix =
          "the plan overstates this server, which is safe but keeps memory idle: check that it "
          "runs the recorded settings (the slots and context findings) and model; launch it "
          "again with this gb10tune for a like-with-like figure";
      break;
  }
  return finding;
}

}  // namespace

namespace {

// The device-path finding (K3).
std::vector<Finding> check_device_path(const ProcessSnapshot& snapshot, const gpu::NvmlReport& nvml,
                                       const Expectations& expected, const GpuLogEvidence* log) {
  Finding finding;
  finding.id = "device-memory-path";
  finding.fact = "K3";
  finding.summary = "model memory on the device path";
  const int pid = snapshot.process.stat.pid;
  if (!snapshot.memory) {
    finding.severity = Severity::warn;
    finding.evidence = snapshot.memory_error ? snapshot.memory_error->message
                                             : fmt::format("/proc/{}/status was not read", pid);
    finding.fix = "run gb10tune verify again (with sudo if the server runs as another user)";
    return {finding};
  }
  const sys::ProcessMemory& memory = *snapshot.memory;
  std::string evidence = fmt::format("RSS {} (anon {}, file {})", format_bytes(memory.vm_rss),
                                     format_bytes(memory.rss_anon), format_bytes(memory.rss_file));
  if (expected.weights_bytes && expected.kv_bytes) {
    evidence += fmt::format("; plan: weights+KV {}",
                            format_bytes(*expected.weights_bytes + *expected.kv_bytes));
  }
  if (log != nullptr && log->against_gpu()) {
    finding.severity = Severity::fail;
    finding.evidence =
        fmt::format("{}; {}: {} in host memory", evidence, log->describe(),
                    log->no_gpu_backend() ? "the model sits" : "part of the model sits");
    finding.fix = log->fix();
    return {finding};
  }
  if (nvml.loaded) {
    std::uint64_t gpu_bytes = 0;
    bool listed = false;
    for (const gpu::GpuProcessMemory& entry : nvml.processes) {
      if (entry.pid == static_cast<std::uint32_t>(pid)) {
        gpu_bytes += entry.used_bytes;
        listed = true;
      }
    }
    evidence += listed ? fmt::format("; NVML per-process GPU memory {}", format_bytes(gpu_bytes))
                       : "; not among NVML's compute processes";
    constexpr std::string_view kNamespaceHint =
        "if gb10tune runs in another pid namespace (a container) than the server, run it in "
        "the server's";
    if (memory.vm_rss > kLargeRss && gpu_bytes < kSmallGpu) {
      finding.severity = Severity::fail;
      finding.evidence = evidence +
                         ": the managed path (managed memory is not accounted per "
                         "process, so the weights sit in host-visible pages)";
      finding.fix = fmt::format(
          "remove GGML_CUDA_ENABLE_UNIFIED_MEMORY from the server's environment and check -ngl; "
          "{}",
          kNamespaceHint);
      return {finding};
    }
    if (!listed) {
      finding.severity = Severity::fail;
      finding.evidence = evidence + ": the process holds no GPU memory";
      finding.fix = fmt::format(
          "check that llama.cpp was built with CUDA (-DGGML_CUDA=ON) and that -ngl puts layers "
          "on the GPU; {}",
          kNamespaceHint);
      return {finding};
    }
    if (expected.weights_bytes && gpu_bytes < *expected.weights_bytes / 2) {
      finding.severity = Severity::fail;
      finding.evidence = evidence + fmt::format(
                                        ": less than half of the planned weights ({}) is in "
                                        "device memory",
                                        format_bytes(*expected.weights_bytes));
      finding.fix =
          "remove GGML_CUDA_ENABLE_UNIFIED_MEMORY from the server's environment and "
          "pass -ngl all";
      return {finding};
    }
    if (!expected.weights_bytes && gpu_bytes < kSmallGpu) {
      finding.severity = Severity::warn;
      finding.evidence = evidence +
                         ": too little to tell where the model sits, and its size is unknown "
                         "(no launch record)";
      finding.fix = "start the server with gb10tune launch so that verify knows the model's size";
      return {finding};
    }
    finding.evidence = evidence;
    return {finding};
  }
  evidence += fmt::format("; {}", nvml.detail.empty() ? "NVML not available" : nvml.detail);
  finding.severity = Severity::warn;
  if (memory.rss_anon > kLargeRss) {
    // cudaMalloc memory is not in the process's own pages; tens of GB of anonymous RSS is
    // what managed memory or layers left on the CPU look like.
    finding.evidence = evidence +
                       ": tens of GB of anonymous RSS look like the managed path or "
                       "layers on the CPU, and NVML cannot confirm either";
  } else {
    finding.evidence = evidence + ": unknown, nothing shows where the model sits";
  }
  finding.fix =
      "check the environment and -ngl findings; install the NVIDIA driver's NVML "
      "(libnvidia-ml.so.1) for a definite answer";
  return {finding};
}

}  // namespace

std::vector<Finding> check_memory(const ProcessSnapshot& snapshot, const gpu::NvmlReport& nvml,
                                  const Expectations& expected, const GpuLogEvidence* log) {
  std::vector<Finding> findings = check_device_path(snapshot, nvml, expected, log);
  if (snapshot.memory && expected.load_bytes) {
    findings.push_back(plan_vs_measured(snapshot, nvml, expected));
  }
  for (Finding& finding : check_device_memory(snapshot, nvml, expected)) {
    findings.push_back(std::move(finding));
  }
  return findings;
}

}  // namespace gb10tune::verify
