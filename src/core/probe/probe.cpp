#include "gb10tune/probe/probe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::probe {

namespace {

constexpr std::string_view kUnifiedMemoryVar = "GGML_CUDA_ENABLE_UNIFIED_MEMORY";

MemoryBudget compute_budget(const sys::MemInfo& memory, const sys::CgroupMemory& cgroup) {
  MemoryBudget budget{memory.available_bytes, "MemAvailable"};
  if (cgroup.limit_bytes) {
    const std::uint64_t used = cgroup.usage_bytes.value_or(0);
    const std::uint64_t room = *cgroup.limit_bytes > used ? *cgroup.limit_bytes - used : 0;
    if (room < budget.bytes) {
      budget = {room, "cgroup memory.max"};
    }
  }
  return budget;
}

Advice build_line_advice(const ProbeResult& facts) {
  Advice advice{"build-line", "K11", Severity::info, "", "", ""};
  const BuildAdvice& build = *facts.build;
  advice.command = build.configure_command + " && " + build.build_command;
  if (facts.is_gb10()) {
    advice.title = "build llama.cpp for GB10: CUDA arch 121a-real and the explicit ARM arch";
  } else if (!build.cuda_architectures.empty()) {
    advice.title = fmt::format("build llama.cpp for this {} (CUDA arch {})", facts.machine_class(),
                               fmt::join(build.cuda_architectures, ";"));
  } else {
    advice.title = "build llama.cpp CPU-only: no NVIDIA GPU is usable here";
  }
  std::vector<std::string> why;
  if (!build.cuda_architectures.empty()) {
    why.push_back(
        fmt::format("CMAKE_CUDA_ARCHITECTURES={} compiles the CUDA kernels natively "
                    "for this GPU's compute capability (no PTX JIT at start-up)",
                    fmt::join(build.cuda_architectures, ";")));
  } else {
    why.push_back(gpu::no_gpu_reason(facts.gpu) +
                  "; on a machine with a GPU add -DGGML_CUDA=ON and its architecture");
  }
  if (!build.arm_arch.empty()) {
    why.push_back(fmt::format("GGML_CPU_ARM_ARCH={} is what every core of this CPU runs ({})",
                              build.arm_arch, fmt::join(facts.cpu->features, ", ")));
  } else if (facts.cpu && facts.cpu->family == sys::CpuFamily::x86) {
    why.push_back(fmt::format(
        "GGML_NATIVE=ON lets the compiler target this CPU's own "
        "extensions ({})",
        facts.cpu->features.empty() ? std::string("none found")
                                    : fmt::format("{}", fmt::join(facts.cpu->features, ", "))));
  }
  advice.detail = fmt::format("{}.", fmt::join(why, "; "));
  return advice;
}

Advice native_trap_advice(const ProbeResult& facts) {
  Advice advice{"ggml-native", "K11", Severity::warn, "", "", ""};
  advice.title = "do not build with GGML_NATIVE=ON (llama.cpp's default) on this ARM CPU";
  advice.detail = fmt::format(
      "GGML_NATIVE=ON asks the compiler for -mcpu=native; a compiler that does not know this "
      "CPU ({}) silently falls back to plain armv8-a and turns dotprod, i8mm and SVE off, with "
      "no error. Build with -DGGML_NATIVE=OFF and -DGGML_CPU_ARM_ARCH={} as in the build line; "
      "llama-server's system_info line then lists DOTPROD, MATMUL_INT8 and SVE.",
      facts.cpu->model, facts.build->arm_arch);
  return advice;
}

Advice unified_memory_advice(const ProbeResult& facts, const platform::Environment& env) {
  Advice advice{"unified-memory-env", "K2", Severity::ok, "", "", ""};
  const auto value = env.get(std::string(kUnifiedMemoryVar));
  const bool has_gpu = facts.gpu.status == gpu::GpuStatus::available;
  if (!value && !has_gpu) {
    advice.severity = Severity::not_applicable;
    advice.title = fmt::format("{} is not set (no GPU here)", kUnifiedMemoryVar);
    advice.detail =
        "The variable only matters for CUDA builds of llama.cpp; on a GPU machine "
        "keep it out of the server's environment (=0 also enables it).";
    return advice;
  }
  if (!value) {
    advice.title = fmt::format("{} is not set in this environment", kUnifiedMemoryVar);
    advice.detail = fmt::format(
        "Good: llama.cpp then allocates model and KV cache with cudaMalloc (the device path). "
        "Keep it out of the server's environment too (systemd units, shell profiles); gb10tune "
        "launch removes it and verify checks the running server.");
    return advice;
  }
  advice.severity = has_gpu ? Severity::warn : Severity::info;
  advice.title =
      fmt::format("{}={} is set in this environment: unset it", kUnifiedMemoryVar, *value);
  advice.detail = fmt::format(
      "llama.cpp tests whether the variable exists, not its value, so '{}' also turns every "
      "CUDA allocation into cudaMallocManaged memory. On GB10 that path reads ~32% slower "
      "(162 vs 237 GB/s); removing it took decode from 15.1 to 17.5 t/s. Remove it from the "
      "server's environment (unset it, or drop it from the unit/script that sets it).",
      *value);
  advice.command = fmt::format("unset {}", kUnifiedMemoryVar);
  return advice;
}

Advice nvidia_smi_advice(const ProbeResult& facts) {
  Advice advice{"nvidia-smi-memory", "K3", Severity::not_applicable, "", "", ""};
  if (facts.is_gb10()) {
    advice.severity = Severity::warn;
    advice.title = "do not trust nvidia-smi's memory figures on GB10";
    advice.detail =
        "memory.total/used read N/A and managed allocations are not counted per process (a "
        "server with 90 GB RSS showed ~300 MiB). The honest figures are the process RSS and "
        "MemAvailable; per-process GPU memory under 1 GiB with tens of GB of RSS is the sign "
        "of the managed path. gb10tune verify reads them for you.";
  } else if (facts.gpu.status == gpu::GpuStatus::available) {
    advice.title = "nvidia-smi memory figures are reliable here (not a GB10)";
    advice.detail = fmt::format(
        "The {} has its own memory, which nvidia-smi accounts per "
        "process; the GB10 caveat does not apply.",
        facts.machine_class());
  } else {
    advice.title = "nvidia-smi memory figures: not applicable (no GPU)";
    advice.detail = gpu::no_gpu_reason(facts.gpu) + ".";
  }
  return advice;
}

// "24.9 GB free of 25.4 GB − 1.1 GB reserve = 23.8 GB" for one GPU's budget.
std::string gpu_budget_words(const plan::GpuBudget& gpu) {
  if (!gpu.free_bytes) {
    return fmt::format("{}: free memory unknown (NVML did not report it)", gpu.name);
  }
  return fmt::format("{} {}: {} free{} − {} reserve = {}", gpu.name, gpu.description,
                     format_bytes_si(*gpu.free_bytes),
                     gpu.total_bytes ? " of " + format_bytes_si(*gpu.total_bytes) : std::string(),
                     format_bytes_si(gpu.reserve_bytes), format_bytes_si(*gpu.available_bytes()));
}

Advice budget_advice(const ProbeResult& facts) {
  Advice advice{"memory-budget", "K3", Severity::info, "", "", ""};
  const MemoryBudget& budget = *facts.budget;
  if (budget.source != "MemAvailable") {
    advice.severity = Severity::warn;
  }
  if (facts.is_gb10() || (!facts.gpu.devices.empty() && facts.gpu.devices.front().integrated)) {
    advice.fact = "K19";
    advice.title = fmt::format(
        "memory budget: {} ({} {} − {} reserve), one pool shared by CPU and GPU",
        format_bytes_si(facts.plan_budgets.host_available_bytes.value_or(0)), budget.source,
        format_bytes_si(budget.bytes), format_bytes_si(facts.plan_budgets.reserve_bytes));
    advice.detail =
        "On a unified-memory GPU the model, the KV cache and everything else come from one "
        "pool. CUDA's free-memory figure counts the page cache as used, so plan against "
        "MemAvailable, less a system reserve (gb10tune launch keeps 12 GB by default; "
        "--reserve).";
  } else if (facts.plan_budgets.per_device) {
    const PlanBudgets& budgets = facts.plan_budgets;
    std::vector<std::string> gpus;
    for (const plan::GpuBudget& gpu : budgets.gpus) {
      gpus.push_back(gpu_budget_words(gpu));
    }
    advice.title = "memory budget: one per GPU for device buffers, one for host buffers";
    advice.detail = fmt::format("{}; host {} ({} − {} reserve). ", fmt::join(gpus, "; "),
                                format_bytes_si(budgets.host_available_bytes.value_or(0)),
                                budget.source, format_bytes_si(budgets.reserve_bytes));
    advice.detail +=
        "Layers, their KV cache, the compute buffers and the CUDA context on a discrete GPU use "
        "its own memory; gb10tune launch plans them against each GPU's free memory (NVML) less "
        "the GPU reserve, and only what stays in host memory (token embeddings, layers left on "
        "the CPU, pinned buffers, the prompt cache) against MemAvailable less the reserve. The "
        "tightest part decides whether a plan fits.";
    if (std::any_of(budgets.gpus.begin(), budgets.gpus.end(),
                    [](const plan::GpuBudget& g) { return !g.free_bytes; })) {
      advice.severity = Severity::warn;
      advice.detail +=
          " A GPU's free memory is unknown (NVML did not report it): launch cannot check "
          "that GPU's part; install the driver's NVML (libnvidia-ml.so.1).";
    }
  } else if (!facts.gpu.devices.empty()) {
    const gpu::GpuDevice& device = facts.gpu.devices.front();
    advice.title = fmt::format("memory budget: {} of GPU memory on the {}; {} of host memory",
                               format_bytes_si(device.total_memory_bytes), device.name,
                               format_bytes_si(budget.bytes));
    advice.detail =
        "Layers and KV cache on the GPU use its own memory; host memory "
        "(MemAvailable) only holds what stays on the CPU.";
  } else {
    advice.title =
        fmt::format("memory budget: {} ({})", format_bytes_si(budget.bytes), budget.source);
    advice.detail =
        "Without a GPU the model runs from host memory; plan against "
        "MemAvailable, not MemFree (the page cache is reclaimable).";
  }
  if (budget.source != "MemAvailable") {
    advice.detail += fmt::format(
        " A cgroup limit caps this session below MemAvailable ({}); "
        "a server started here cannot use more.",
        format_bytes_si(facts.memory->available_bytes));
  }
  return advice;
}

Advice mmap_advice() {
  Advice advice{"mmap-loading", "K19", Severity::info, "", "", ""};
  advice.title = "load models without mmap on GB10";
  advice.detail =
      "Loading through mmap was measured at 224 s against 22 s without. Newer llama.cpp builds "
      "avoid mmap on integrated GPUs by default; on older builds pass --no-mmap (gb10tune "
      "launch picks the right flag for the installed binary).";
  return advice;
}

}  // namespace

std::string ProbeResult::machine_class() const {
  if (gpu.status != gpu::GpuStatus::available || gpu.devices.empty()) {
    return "no GPU";
  }
  return std::string(gpu::describe(gpu::classify(gpu.devices.front())));
}

bool ProbeResult::is_gb10() const {
  return gpu.status == gpu::GpuStatus::available && !gpu.devices.empty() &&
         gpu::classify(gpu.devices.front()) == gpu::GpuKind::gb10;
}

PlanBudgets plan_budgets(const ProbeResult& facts, std::uint64_t reserve,
                         std::uint64_t gpu_reserve) {
  PlanBudgets out;
  out.reserve_bytes = reserve;
  out.gpu_reserve_bytes = gpu_reserve;
  if (facts.budget) {
    out.host_available_bytes = facts.budget->bytes > reserve ? facts.budget->bytes - reserve : 0;
  }
  // The same list launch plans a CUDA server against: empty on GB10 and integrated GPUs.
  if (auto gpus = plan::gpu_budgets(facts.gpu, facts.nvml, {}, gpu_reserve); gpus) {
    out.gpus = std::move(*gpus);
  }
  out.per_device = !out.gpus.empty();
  return out;
}

std::vector<Advice> derive_advice(const ProbeResult& facts, const platform::Environment& env) {
  std::vector<Advice> advice;
  if (facts.build) {
    advice.push_back(build_line_advice(facts));
    if (!facts.build->arm_arch.empty()) {
      advice.push_back(native_trap_advice(facts));
    }
  }
  advice.push_back(unified_memory_advice(facts, env));
  advice.push_back(nvidia_smi_advice(facts));
  if (facts.budget) {
    advice.push_back(budget_advice(facts));
  }
  if (facts.is_gb10()) {
    advice.push_back(mmap_advice());
  }
  return advice;
}

ProbeResult run_probe(const ProbeInputs& inputs) {
  ProbeResult result;
  result.generated_at = inputs.now_iso8601;
  result.os = sys::read_os_info(*inputs.sysroot, inputs.fallback_arch);

  if (auto cpu = sys::read_cpuinfo(*inputs.sysroot)) {
    result.cpu = std::move(*cpu);
  } else {
    result.errors.push_back(cpu.error().message);
  }
  if (result.os.arch.empty() && result.cpu) {
    // A captured tree that does not say: the CPU family tells the architecture.
    if (result.cpu->family == sys::CpuFamily::arm) {
      result.os.arch = "aarch64";
    } else if (result.cpu->family == sys::CpuFamily::x86) {
      result.os.arch = "x86_64";
    }
  }
  if (auto memory = sys::read_meminfo(*inputs.sysroot)) {
    result.memory = *memory;
  } else {
    result.errors.push_back(memory.error().message);
  }
  result.cgroup = sys::read_cgroup_memory(*inputs.sysroot);
  if (result.memory) {
    result.budget = compute_budget(*result.memory, result.cgroup);
  }

  result.gpu = inputs.gpu->query_devices();
  result.nvml = inputs.gpu->query_nvml();
  result.plan_budgets = plan_budgets(result, inputs.reserve_bytes, inputs.gpu_reserve_bytes);
  if (result.cpu) {
    result.build = make_build_advice(*result.cpu, result.gpu);
  }
  result.advice = derive_advice(result, *inputs.env);

  if (inputs.find_llama_servers) {
    result.llama_servers = find_llama_servers(*inputs.env, inputs.llama_server);
    query_versions(result.llama_servers);
  }
  result.bandwidth.summary = "not run (gb10tune probe --quick-bench, or gb10tune bench)";
  return result;
}

}  // namespace gb10tune::probe
