#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/plan/calibration.hpp"
#include "gb10tune/plan/expected_memory.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/verify/checks.hpp"

namespace gb10tune::verify {

namespace {

// The tolerance of one device's figure against its plan: launch's and verify's one tolerance
// (the H200 runs were within −2.5% … +0.1%, docs/memory-plan.md).
constexpr double kDeviceTolerancePercent = plan::kPlanTolerancePercent;

// What NVML says one GPU holds for the server.
struct DeviceReading {
  std::optional<std::uint64_t> bytes;  // nullopt: nothing to compare
  bool whole_device = false;           // the GPU's total in use, every process counted
  bool not_listed = false;             // NVML lists the device's processes, not this pid
  std::string how;                     // the figure's source, or why there is none
};

// The NVML entry of `device`: by PCI bus id, or (a record without one) the only GPU.
const gpu::GpuMemory* find_nvml_device(const gpu::NvmlReport& nvml, const DeviceExpectation& device,
                                       std::size_t planned_gpus) {
  if (!device.pci_bus_id.empty()) {
    const auto it = std::find_if(nvml.memory.begin(), nvml.memory.end(),
                                 [&](const auto& m) { return m.pci_bus_id == device.pci_bus_id; });
    return it == nvml.memory.end() ? nullptr : &*it;
  }
  return planned_gpus == 1 && nvml.memory.size() == 1 ? &nvml.memory.front() : nullptr;
}

DeviceReading read_device(const gpu::NvmlReport& nvml, const gpu::GpuMemory& memory, int pid) {
  DeviceReading reading;
  const auto pid32 = static_cast<std::uint32_t>(pid);
  std::uint64_t bytes = 0;
  bool listed = false;
  bool known = true;
  bool listed_anywhere = false;
  for (const gpu::GpuProcessMemory& entry : nvml.processes) {
    if (entry.pid != pid32) {
      continue;
    }
    listed_anywhere = true;
    if (entry.device_index == memory.nvml_index) {
      listed = true;
      known = known && entry.used_known;
      bytes += entry.used_bytes;
    }
  }
  if (listed && known) {
    reading.bytes = bytes;
    reading.how = "NVML per-process";
    return reading;
  }
  std::string why;
  if (!memory.processes_listed) {
    why = "NVML could not list the GPU's processes";
  } else if (listed) {
    why = "NVML lists the process without its memory";
  } else if (!listed_anywhere) {
    why = fmt::format("pid {} is not among NVML's processes (another pid namespace?)", pid);
  } else {
    reading.not_listed = true;
    reading.how = fmt::format("pid {} is not among its NVML compute processes", pid);
    return reading;
  }
  const std::uint64_t total = memory.total_bytes;
  reading.bytes = total > memory.free_bytes ? total - memory.free_bytes : 0;
  reading.whole_device = true;
  reading.how = fmt::format("NVML total in use on the GPU, every process counted ({})", why);
  return reading;
}

Finding device_finding(const DeviceExpectation& device, const gpu::NvmlReport& nvml, int pid,
                       std::size_t planned_gpus) {
  Finding finding;
  finding.id = "device-plan-vs-measured";
  finding.fact = "K22";
  finding.summary = fmt::format("{}{} holds what its plan put there", device.name,
                                device.description.empty() ? "" : " (" + device.description + ")");
  const std::string plan_text = fmt::format("plan {}", format_bytes(device.planned_bytes));
  finding.severity = Severity::warn;
  if (!nvml.loaded) {
    finding.evidence = fmt::format("{}; measured unknown: {}", plan_text,
                                   nvml.detail.empty() ? "NVML not available" : nvml.detail);
    finding.fix = "install the NVIDIA driver's NVML (libnvidia-ml.so.1) to measure each GPU";
    return finding;
  }
  const gpu::GpuMemory* memory = find_nvml_device(nvml, device, planned_gpus);
  if (memory == nullptr) {
    finding.evidence = fmt::format(
        "{}; measured unknown: {}", plan_text,
        device.pci_bus_id.empty()
            ? std::string("the launch record does not say which NVML device it is (no PCI bus "
                          "id; written by an older gb10tune)")
            : fmt::format("NVML reports no GPU at PCI bus id {}", device.pci_bus_id));
    finding.fix = device.pci_bus_id.empty()
                      ? "launch the server again with this gb10tune: its record names each GPU"
                      : "check that the GPU is still visible (nvidia-smi) and that "
                        "CUDA_VISIBLE_DEVICES did not change";
    return finding;
  }
  const DeviceReading reading = read_device(nvml, *memory, pid);
  if (reading.not_listed) {
    finding.severity = Severity::fail;
    finding.evidence =
        fmt::format("{}; {}: the server holds nothing there", plan_text, reading.how);
    finding.fix =
        "check --device, --tensor-split and CUDA_VISIBLE_DEVICES of the running server against "
        "the plan; launch it again";
    return finding;
  }
  const std::uint64_t measured = *reading.bytes;
  const double error = plan::error_percent(device.planned_bytes, measured);
  finding.evidence = fmt::format("{}, measured {} ({}): error {:+.1f}%", plan_text,
                                 format_bytes(measured), reading.how, error);
  // Below the plan by no more than what comes with the first prompts (cuBLAS, the memory
  // pool), within the tolerance of that lower figure: a server that has not served yet.
  const std::uint64_t before_prompts =
      device.planned_bytes > device.service_bytes ? device.planned_bytes - device.service_bytes : 0;
  const double error_before = plan::error_percent(before_prompts, measured);
  if (error < -kDeviceTolerancePercent && device.service_bytes > 0 &&
      error_before >= -kDeviceTolerancePercent) {
    finding.evidence += fmt::format(
        " (before its first prompts: the plan less {} that cuBLAS and the memory pool take once "
        "it serves, {:+.1f}%)",
        format_bytes(device.service_bytes), error_before);
    finding.severity = Severity::ok;
    return finding;
  }
  if (error > kDeviceTolerancePercent) {
    if (reading.whole_device) {
      finding.evidence +=
          ": more in use than planned, but the figure counts every process on the GPU, so "
          "unknown whether the server holds it";
      finding.fix =
          "install a driver whose NVML reports per-process memory, or stop the other GPU "
          "processes and verify again";
    } else {
      finding.evidence += ": the server holds more on this GPU than its plan allowed";
      finding.fix =
          "the plan underestimates this GPU: keep the difference free with a larger "
          "--gpu-reserve, or put fewer layers on it (--gpu-layers, --tensor-split), and launch "
          "again";
    }
    return finding;
  }
  if (error < -kDeviceTolerancePercent) {
    finding.evidence += ": less than the plan puts on this GPU";
    finding.fix =
        "the layers may sit elsewhere: check the server's -ngl, --tensor-split and --device "
        "(start it with -lv 4 to log where each buffer went)";
    return finding;
  }
  finding.severity = Severity::ok;
  return finding;
}

Finding host_finding(const ProcessSnapshot& snapshot, const Expectations& expected) {
  Finding finding;
  finding.id = "host-plan-vs-measured";
  finding.fact = "K22";
  finding.summary = "host memory holds what the host part of the plan put there";
  const std::uint64_t load = *expected.host_load_bytes;
  const std::uint64_t limit = std::max(load, expected.host_total_bytes);
  // The host side is measured like a CPU server: mapped weights not read yet count as read.
  plan::MemoryPlan host;
  host.weights_bytes = expected.host_weights_bytes;
  const plan::Measurement m =
      plan::measure(host, plan::PlanBackend::cpu,
                    plan::process_reading(*snapshot.memory, {}, snapshot.process.stat.pid));
  const std::uint64_t measured = *m.measured_bytes;
  finding.evidence = fmt::format(
      "host plan at load {} ({} with the prompt cache's limit, margin and calibration), {}: "
      "{:+.1f}% of the load figure",
      format_bytes(load), format_bytes(limit), m.how, plan::error_percent(load, measured));
  if (static_cast<double>(measured) >
      static_cast<double>(limit) * (1.0 + kDeviceTolerancePercent / 100.0)) {
    finding.severity = Severity::warn;
    finding.evidence += ": the process holds more host memory than its plan allowed";
    finding.fix =
        "raise --overhead by the difference and launch again (launch learns a calibration only "
        "from runs within 5% of the plan)";
  } else if (static_cast<double>(measured) <
             static_cast<double>(load - std::min(load, expected.host_service_bytes)) *
                 (1.0 - kDeviceTolerancePercent / 100.0)) {
    finding.severity = Severity::warn;
    finding.summary = "the host part of the plan is far above the process";
    finding.evidence += ": a safe plan, but a wrong one";
    finding.fix =
        "the host part overstates this server: check that it runs the recorded -ngl, "
        "--tensor-split and context (start it with -lv 4 to log where each buffer went)";
  }
  return finding;
}

}  // namespace

std::vector<Finding> check_device_memory(const ProcessSnapshot& snapshot,
                                         const gpu::NvmlReport& nvml,
                                         const Expectations& expected) {
  std::vector<Finding> findings;
  if (expected.source != "launch record" || expected.backend != "cuda") {
    return findings;  // no plan, or a CPU plan: one pool (plan-vs-measured)
  }
  if (!expected.devices || expected.devices->empty()) {
    // NVML reports memory figures for discrete GPUs only (GB10: none, K3).
    if (nvml.memory.empty()) {
      return findings;
    }
    Finding finding;
    finding.id = "device-plan-vs-measured";
    finding.fact = "K22";
    finding.severity = Severity::warn;
    finding.summary = "each GPU holds what its plan put there";
    finding.evidence = fmt::format(
        "unknown: {}; NVML reports {} discrete GPU(s), so each needs its own plan",
        expected.no_device_plan.empty() ? std::string("the launch record has no per-device plan")
                                        : expected.no_device_plan,
        nvml.memory.size());
    finding.fix =
        "launch the server again with this gb10tune: its record then holds each GPU's plan";
    findings.push_back(std::move(finding));
    return findings;
  }
  const int pid = snapshot.process.stat.pid;
  for (const DeviceExpectation& device : *expected.devices) {
    if (device.planned_bytes > 0) {
      findings.push_back(device_finding(device, nvml, pid, expected.devices->size()));
    }
  }
  if (snapshot.memory && expected.host_load_bytes) {
    findings.push_back(host_finding(snapshot, expected));
  }
  return findings;
}

}  // namespace gb10tune::verify
