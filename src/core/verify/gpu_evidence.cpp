#include <fmt/format.h>

#include "gb10tune/util/strings.hpp"
#include "gb10tune/verify/checks.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::verify {

namespace {

// What llama.cpp 2026-08 prints (common/arg.cpp, src/llama-model.cpp load_tensors).
constexpr std::string_view kNoGpu = "no usable GPU found";
constexpr std::string_view kOffloaded = "offloaded ";
constexpr std::string_view kLayersToGpu = " layers to GPU";
constexpr std::string_view kModelBuffer = " model buffer size = ";
constexpr std::string_view kPrintInfo = "common_params_print_info:";

// The start of the line holding `at`.
std::size_t line_start(std::string_view text, std::size_t at) {
  const std::size_t newline = at == 0 ? std::string_view::npos : text.rfind('\n', at - 1);
  return newline == std::string_view::npos ? 0 : newline + 1;
}

// A buffer in host memory: CPU, CPU_Mapped, CPU_REPACK, CUDA_Host (pinned host memory).
bool is_host_buffer(std::string_view name) {
  return starts_with(name, "CPU") || name.ends_with("_Host");
}

std::uint64_t nvml_bytes_of(const gpu::NvmlReport& nvml, int pid, bool& listed) {
  std::uint64_t bytes = 0;
  listed = false;
  for (const gpu::GpuProcessMemory& entry : nvml.processes) {
    if (entry.pid == static_cast<std::uint32_t>(pid)) {
      bytes += entry.used_bytes;
      listed = true;
    }
  }
  return bytes;
}

}  // namespace

bool GpuLogEvidence::against_gpu() const {
  return !no_gpu_line.empty() || (offloaded && offloadable && *offloaded < *offloadable) ||
         (device_buffers.empty() && !host_buffers.empty());
}

bool GpuLogEvidence::all_layers_on_gpu() const {
  return no_gpu_line.empty() && offloaded && offloadable && *offloadable > 0 &&
         *offloaded >= *offloadable && !device_buffers.empty();
}

bool GpuLogEvidence::no_gpu_backend() const {
  const bool held_back = offloaded && offloadable && *offloaded < *offloadable;
  return !no_gpu_line.empty() || (!held_back && device_buffers.empty() && !host_buffers.empty());
}

std::string GpuLogEvidence::describe() const {
  std::vector<std::string> parts;
  if (!no_gpu_line.empty()) {
    parts.push_back(fmt::format("'{}'", no_gpu_line));
  }
  if (offloaded && offloadable) {
    parts.push_back(fmt::format("offloaded {}/{} layers to GPU", *offloaded, *offloadable));
  }
  if (!device_buffers.empty() || !host_buffers.empty()) {
    std::vector<std::string> buffers = device_buffers;
    buffers.insert(buffers.end(), host_buffers.begin(), host_buffers.end());
    parts.push_back(fmt::format("model buffers {}", fmt::join(buffers, ", ")));
  }
  if (parts.empty()) {
    return fmt::format("{} says nothing about the GPU", log_name);
  }
  std::string text = fmt::format("{} says {}", log_name, fmt::join(parts, "; "));
  if (no_gpu_line.empty() && device_buffers.empty() && !host_buffers.empty()) {
    text += " (no model buffer on a GPU)";
  }
  return text;
}

std::string GpuLogEvidence::fix() const {
  if (no_gpu_backend()) {
    return "this llama-server has no usable GPU backend: build llama.cpp with -DGGML_CUDA=ON "
           "(gb10tune probe prints the build line) and check that the GPU is visible "
           "(nvidia-smi)";
  }
  return "pass -ngl all and check free memory (llama.cpp fits layers to what is free)";
}

std::string_view latest_run(std::string_view log_text) {
  const std::string header = fmt::format("==== {} ", kToolName);
  for (std::size_t at = log_text.rfind(header); at != std::string_view::npos;
       at = at == 0 ? std::string_view::npos : log_text.rfind(header, at - 1)) {
    if (line_start(log_text, at) == at) {
      return log_text.substr(at);
    }
  }
  const std::size_t info = log_text.rfind(kPrintInfo);
  if (info == std::string_view::npos) {
    return log_text;
  }
  // The start prints several common_params_print_info lines; the warnings of argument
  // parsing come just before them.
  std::size_t start = line_start(log_text, info);
  while (start > 0) {
    const std::size_t previous = line_start(log_text, start - 1);
    const std::string_view line = log_text.substr(previous, start - previous);
    if (!starts_with(line, "warning:") && line.find(kPrintInfo) == std::string_view::npos) {
      break;
    }
    start = previous;
  }
  return log_text.substr(start);
}

GpuLogEvidence read_gpu_evidence(std::string_view log_text, std::string_view log_name) {
  GpuLogEvidence evidence;
  evidence.log_name = std::string(log_name);
  for (std::string_view line : split(latest_run(log_text), '\n')) {
    line = trim(line);
    if (line.find(kNoGpu) != std::string_view::npos) {
      if (evidence.no_gpu_line.empty()) {
        evidence.no_gpu_line = std::string(line);
      }
      continue;
    }
    if (const std::size_t at = line.find(kOffloaded);
        at != std::string_view::npos && line.ends_with(kLayersToGpu)) {
      const std::string_view counts = line.substr(
          at + kOffloaded.size(), line.size() - kLayersToGpu.size() - at - kOffloaded.size());
      const std::size_t slash = counts.find('/');
      if (slash != std::string_view::npos) {
        const auto n = parse_u64(counts.substr(0, slash));
        const auto m = parse_u64(counts.substr(slash + 1));
        if (n && m && *n <= 0xffffffffu && *m <= 0xffffffffu) {
          evidence.offloaded = static_cast<std::uint32_t>(*n);
          evidence.offloadable = static_cast<std::uint32_t>(*m);
        }
      }
      continue;
    }
    if (const std::size_t at = line.find(kModelBuffer); at != std::string_view::npos) {
      const auto words = split_words(line.substr(0, at));
      if (words.empty()) {
        continue;
      }
      const std::string_view name = words.back();
      const std::string entry =
          fmt::format("{} {}", name, trim(line.substr(at + kModelBuffer.size())));
      (is_host_buffer(name) ? evidence.host_buffers : evidence.device_buffers).push_back(entry);
    }
  }
  return evidence;
}

void confirm_gpu_layers(Finding& finding, const GpuLogEvidence* log, const gpu::NvmlReport& nvml,
                        int pid, const Expectations& expected) {
  if (finding.id != "all-layers-on-gpu") {
    return;
  }
  if (log != nullptr && log->against_gpu()) {
    finding.severity = Severity::fail;
    finding.evidence += fmt::format("; but {}", log->describe());
    finding.fix = log->fix();
    return;
  }
  if (finding.severity != Severity::ok) {
    return;  // the flag itself already says the layers are not (all) asked for
  }
  if (log != nullptr && log->all_layers_on_gpu()) {
    finding.evidence += fmt::format("; {}", log->describe());
    return;
  }
  bool listed = false;
  const std::uint64_t gpu_bytes = nvml_bytes_of(nvml, pid, listed);
  if (nvml.loaded && listed && expected.weights_bytes && *expected.weights_bytes > 0 &&
      gpu_bytes >= *expected.weights_bytes) {
    finding.evidence += fmt::format("; NVML per-process GPU memory {} ≥ the planned weights {}",
                                    format_bytes(gpu_bytes), format_bytes(*expected.weights_bytes));
    return;
  }
  std::vector<std::string> missing;
  missing.push_back(log == nullptr
                        ? std::string("no server log was read")
                        : fmt::format("{} has no load_tensors lines saying where the layers "
                                      "went (llama-server prints them from -lv 4 on)",
                                      log->log_name));
  if (!nvml.loaded) {
    missing.push_back(nvml.detail.empty() ? std::string("NVML not available") : nvml.detail);
  } else if (!listed) {
    missing.push_back(fmt::format("pid {} is not among NVML's compute processes", pid));
  } else if (!expected.weights_bytes) {
    missing.push_back(
        fmt::format("NVML shows {} on the GPU but the model's size is unknown (no launch record)",
                    format_bytes(gpu_bytes)));
  } else {
    missing.push_back(fmt::format("NVML shows {} on the GPU, less than the planned weights {}",
                                  format_bytes(gpu_bytes), format_bytes(*expected.weights_bytes)));
  }
  finding.severity = Severity::warn;
  finding.evidence +=
      fmt::format("; unknown whether the layers are there: {}", fmt::join(missing, "; "));
  finding.fix =
      expected.weights_bytes
          ? "start the server with -lv 4 (its log then says how many layers went to the GPU), "
            "or install the NVIDIA driver's NVML (libnvidia-ml.so.1) so that verify can weigh "
            "the process's GPU memory against the planned weights"
          : "start the server with -lv 4 (its log then says how many layers went to the GPU), "
            "or with gb10tune launch so that verify knows the model's size";
}

std::optional<std::string> gpu_checks_not_applicable(bool gpu_seen, const gpu::NvmlReport& nvml) {
  if (gpu_seen || nvml.loaded) {
    return std::nullopt;
  }
  return std::string(
      "not applicable: this machine has no NVIDIA GPU (its driver lists none in "
      "/proc/driver/nvidia/gpus and NVML is not loaded), so the model is in host memory as on "
      "any CPU-only machine");
}

void mark_gpu_checks_not_applicable(std::vector<Finding>& findings, const std::string& why) {
  for (Finding& finding : findings) {
    if (finding.id != "all-layers-on-gpu" && finding.id != "device-memory-path") {
      continue;
    }
    finding.severity = Severity::not_applicable;
    finding.evidence = finding.evidence.empty() ? why : why + "; seen: " + finding.evidence;
    finding.fix.clear();
  }
}

}  // namespace gb10tune::verify
