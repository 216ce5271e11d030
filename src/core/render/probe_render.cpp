#include "gb10tune/render/probe_render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gb10tune/render/bench_render.hpp"
#include "gb10tune/render/gpu_json.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::render {

using nlohmann::json;

namespace {

std::string_view family_id(sys::CpuFamily family) {
  switch (family) {
    case sys::CpuFamily::arm:
      return "arm";
    case sys::CpuFamily::x86:
      return "x86";
    case sys::CpuFamily::other:
      return "other";
  }
  return "other";
}

json optional_bytes(const std::optional<std::uint64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

json cpu_json(const sys::CpuInfo& cpu) {
  json clusters = json::array();
  for (const sys::CoreCluster& cluster : cpu.clusters) {
    clusters.push_back({{"name", cluster.name},
                        {"implementer", cluster.implementer},
                        {"part", cluster.part},
                        {"cores", cluster.cores}});
  }
  return {
      {"model", cpu.model},   {"family", family_id(cpu.family)}, {"logical_cpus", cpu.logical_cpus},
      {"clusters", clusters}, {"features", cpu.features},        {"flags", cpu.common_flags}};
}

json memory_json(const probe::ProbeResult& result) {
  const sys::MemInfo& m = *result.memory;
  json memory{{"total_bytes", m.total_bytes},
              {"available_bytes", m.available_bytes},
              {"free_bytes", m.free_bytes},
              {"cached_bytes", m.cached_bytes},
              {"buffers_bytes", m.buffers_bytes},
              {"page_cache_bytes", m.page_cache_bytes()},
              {"swap_total_bytes", m.swap_total_bytes},
              {"swap_free_bytes", m.swap_free_bytes}};
  memory["cgroup"] = {{"path", result.cgroup.path},
                      {"limit_bytes", optional_bytes(result.cgroup.limit_bytes)},
                      {"usage_bytes", optional_bytes(result.cgroup.usage_bytes)}};
  if (result.budget) {
    memory["budget"] = {{"bytes", result.budget->bytes}, {"source", result.budget->source}};
  }
  return memory;
}

// The budgets launch plans against: one pool, or each GPU and the host.
json budgets_json(const probe::PlanBudgets& b) {
  json gpus = json::array();
  for (const plan::GpuBudget& gpu : b.gpus) {
    gpus.push_back({{"name", gpu.name},
                    {"description", gpu.description},
                    {"pci_bus_id", gpu.pci_bus_id},
                    {"total_bytes", optional_bytes(gpu.total_bytes)},
                    {"free_bytes", optional_bytes(gpu.free_bytes)},
                    {"reserve_bytes", gpu.reserve_bytes},
                    {"available_bytes", optional_bytes(gpu.available_bytes())}});
  }
  return {{"pool", b.per_device ? "per-device" : "one"},
          {"reserve_bytes", b.reserve_bytes},
          {"gpu_reserve_bytes", b.gpu_reserve_bytes},
          {"host_available_bytes", optional_bytes(b.host_available_bytes)},
          {"gpus", gpus}};
}

json gpu_json(const gpu::GpuReport& report) {
  json devices = json::array();
  for (const gpu::GpuDevice& d : report.devices) {
    devices.push_back(gpu_device_to_json(d));
  }
  return {{"status", gpu::to_string(report.status)},
          {"detail", report.detail},
          {"driver_cuda_version", gpu::format_cuda_version(report.driver_cuda_version)},
          {"runtime_version", gpu::format_cuda_version(report.runtime_version)},
          {"devices", devices}};
}

json nvml_json(const gpu::NvmlReport& nvml) {
  json processes = json::array();
  for (const gpu::GpuProcessMemory& p : nvml.processes) {
    processes.push_back({{"device_index", p.device_index},
                         {"pid", p.pid},
                         {"used_bytes", p.used_known ? json(p.used_bytes) : json(nullptr)}});
  }
  json memory = json::array();
  for (const gpu::GpuMemory& m : nvml.memory) {
    memory.push_back({{"nvml_index", m.nvml_index},
                      {"pci_bus_id", m.pci_bus_id},
                      {"total_bytes", m.total_bytes},
                      {"free_bytes", m.free_bytes}});
  }
  return {{"loaded", nvml.loaded},
          {"detail", nvml.detail},
          {"driver_version", nvml.driver_version},
          {"processes", processes},
          {"memory", memory}};
}

json advice_json(const std::vector<probe::Advice>& advice) {
  json items = json::array();
  for (const probe::Advice& a : advice) {
    items.push_back({{"id", a.id},
                     {"fact", a.fact},
                     {"severity", probe::to_string(a.severity)},
                     {"title", a.title},
                     {"detail", a.detail},
                     {"command", a.command}});
  }
  return items;
}

json servers_json(const std::vector<probe::LlamaServerBinary>& servers) {
  json items = json::array();
  for (const probe::LlamaServerBinary& s : servers) {
    items.push_back({{"path", s.path},
                     {"source", s.source},
                     {"runs", s.runs},
                     {"version", s.version.version},
                     {"build", s.version.build},
                     {"commit", s.version.commit},
                     {"built_with", s.version.built_with},
                     {"error", s.error}});
  }
  return items;
}

std::string mark(probe::Severity severity, const TextStyle& style) {
  switch (severity) {
    case probe::Severity::ok:
      return style.green("✔");
    case probe::Severity::info:
      return style.bold("•");
    case probe::Severity::warn:
      return style.yellow("⚠");
    case probe::Severity::not_applicable:
      return style.dim("–");
  }
  return "•";
}

std::string yes_no(bool value) {
  return value ? "yes" : "no";
}

void render_system(const probe::ProbeResult& r, const TextStyle& style, std::string& out) {
  out += style.bold("System") + "\n";
  out +=
      fmt::format("  OS        {}{}{}\n", r.os.pretty_name.empty() ? "unknown" : r.os.pretty_name,
                  r.os.kernel.empty() ? "" : ", kernel " + r.os.kernel,
                  r.os.arch.empty() ? "" : ", " + r.os.arch);
  if (r.cpu) {
    out += fmt::format("  CPU       {} ({} logical CPUs)\n", r.cpu->model, r.cpu->logical_cpus);
    out +=
        fmt::format("  Features  {}\n", r.cpu->features.empty()
                                            ? std::string("none of interest")
                                            : fmt::format("{}", fmt::join(r.cpu->features, " ")));
  }
}

void render_memory(const probe::ProbeResult& r, const TextStyle& style, std::string& out) {
  if (!r.memory) {
    return;
  }
  const sys::MemInfo& m = *r.memory;
  out += style.bold("Memory") + "\n";
  out += fmt::format("  Total {}   Available {}   Free {}   Page cache {}   Swap {} ({} free)\n",
                     format_bytes_si(m.total_bytes), format_bytes_si(m.available_bytes),
                     format_bytes_si(m.free_bytes), format_bytes_si(m.page_cache_bytes()),
                     format_bytes_si(m.swap_total_bytes), format_bytes_si(m.swap_free_bytes));
  out += fmt::format("  cgroup    {}\n", r.cgroup.limit_bytes
                                             ? "limit " + format_bytes_si(*r.cgroup.limit_bytes)
                                             : std::string("no memory limit"));
  if (!r.budget) {
    return;
  }
  const probe::PlanBudgets& b = r.plan_budgets;
  const std::string host = fmt::format(
      "{}: {} ({}) − {} reserve", style.bold(format_bytes_si(b.host_available_bytes.value_or(0))),
      format_bytes_si(r.budget->bytes), r.budget->source, format_bytes_si(b.reserve_bytes));
  if (!b.per_device) {
    out += fmt::format("  Budget    {}, one pool for everything\n", host);
    return;
  }
  out += fmt::format("  Budget    host buffers   {}\n", host);
  for (const plan::GpuBudget& gpu : b.gpus) {
    if (!gpu.free_bytes) {
      out +=
          fmt::format("            {:<14} {}: free memory unknown (no NVML figure), not checked\n",
                      gpu.name, gpu.description);
      continue;
    }
    out += fmt::format("            {:<14} {}: {} free{} − {} GPU reserve ({})\n", gpu.name,
                       style.bold(format_bytes_si(*gpu.available_bytes())),
                       format_bytes_si(*gpu.free_bytes),
                       gpu.total_bytes ? " of " + format_bytes_si(*gpu.total_bytes) : std::string(),
                       format_bytes_si(gpu.reserve_bytes), gpu.description);
  }
}

void render_gpu(const probe::ProbeResult& r, const TextStyle& style, std::string& out) {
  out += style.bold("GPU") + "\n";
  if (r.gpu.status != gpu::GpuStatus::available) {
    out += fmt::format("  {}\n", gpu::no_gpu_reason(r.gpu));
  }
  for (const gpu::GpuDevice& d : r.gpu.devices) {
    out += fmt::format("  #{} {} — {}\n", d.index, style.bold(d.name),
                       gpu::describe(gpu::classify(d)));
    out += fmt::format("     compute {}.{}, {} SMs, L2 {}, memory {}\n", d.cc_major, d.cc_minor,
                       d.sm_count, format_bytes(d.l2_bytes), format_bytes_si(d.total_memory_bytes));
    out += fmt::format(
        "     integrated {}, managed {}, concurrent managed {}, pageable access {} (host page "
        "tables {})\n",
        yes_no(d.integrated), yes_no(d.managed_memory), yes_no(d.concurrent_managed_access),
        yes_no(d.pageable_memory_access), yes_no(d.pageable_memory_access_uses_host_page_tables));
  }
  std::vector<std::string> versions;
  if (!r.nvml.driver_version.empty()) {
    versions.push_back("driver " + r.nvml.driver_version);
  }
  if (r.gpu.driver_cuda_version > 0) {
    versions.push_back("driver CUDA " + gpu::format_cuda_version(r.gpu.driver_cuda_version));
  }
  if (r.gpu.runtime_version > 0) {
    versions.push_back("runtime " + gpu::format_cuda_version(r.gpu.runtime_version));
  }
  versions.push_back(r.nvml.loaded ? "NVML loaded" : r.nvml.detail);
  out += fmt::format("  {}\n", fmt::join(versions, ", "));
}

void render_advice(const probe::ProbeResult& r, const TextStyle& style, std::string& out) {
  out += style.bold("Advice") + "\n";
  for (const probe::Advice& a : r.advice) {
    out += fmt::format("  {} [{}] {}\n", mark(a.severity, style), a.fact, a.title);
    out += wrap_text(a.detail, 100, "      ") + "\n";
    if (!a.command.empty()) {
      out += fmt::format("      $ {}\n", a.command);
    }
  }
}

void render_servers(const probe::ProbeResult& r, const TextStyle& style, std::string& out) {
  out += style.bold("llama-server") + "\n";
  if (r.llama_servers.empty()) {
    out +=
        "  none found (searched PATH, ~/llama.cpp/build/bin and other build folders; pass "
        "--llama-server PATH)\n";
  }
  for (const probe::LlamaServerBinary& s : r.llama_servers) {
    if (s.runs) {
      const probe::LlamaVersion& v = s.version;
      out += fmt::format("  {} ({}): version {}{}{}{}\n", s.path, s.source,
                         v.version.empty() ? "?" : v.version,
                         v.build.empty() ? "" : ", build " + v.build,
                         v.commit.empty() ? "" : ", commit " + v.commit,
                         v.built_with.empty() ? "" : ", built with " + v.built_with);
    } else {
      out += fmt::format("  {} ({}): {}\n", s.path, s.source, style.red(s.error));
    }
  }
}

}  // namespace

json probe_to_json(const probe::ProbeResult& r) {
  json doc = make_document("probe");
  doc["generated_at"] = r.generated_at;
  doc["machine"] = {{"class", r.machine_class()}, {"is_gb10", r.is_gb10()}};
  doc["os"] = {{"pretty_name", r.os.pretty_name},
               {"id", r.os.id},
               {"version_id", r.os.version_id},
               {"kernel", r.os.kernel},
               {"arch", r.os.arch}};
  doc["cpu"] = r.cpu ? cpu_json(*r.cpu) : json(nullptr);
  doc["memory"] = r.memory ? memory_json(r) : json(nullptr);
  doc["budgets"] = budgets_json(r.plan_budgets);
  doc["gpu"] = gpu_json(r.gpu);
  doc["nvml"] = nvml_json(r.nvml);
  if (r.build) {
    doc["build"] = {{"cmake_definitions", r.build->cmake_definitions},
                    {"arm_arch", r.build->arm_arch},
                    {"cuda_architectures", r.build->cuda_architectures},
                    {"configure_command", r.build->configure_command},
                    {"build_command", r.build->build_command}};
  } else {
    doc["build"] = nullptr;
  }
  doc["advice"] = advice_json(r.advice);
  doc["llama_servers"] = servers_json(r.llama_servers);
  doc["bandwidth"] = {{"ran", r.bandwidth.run.has_value()}, {"summary", r.bandwidth.summary}};
  if (r.bandwidth.run) {
    doc["bandwidth"]["result"] = bandwidth_to_json(*r.bandwidth.run);
  }
  doc["errors"] = r.errors;
  return doc;
}

std::string render_probe_text(const probe::ProbeResult& r, const TextStyle& style) {
  std::string out = fmt::format("{} — {}\n\n", style.bold("gb10tune probe"), r.machine_class());
  render_system(r, style, out);
  render_memory(r, style, out);
  out += '\n';
  render_gpu(r, style, out);
  out += '\n';
  render_advice(r, style, out);
  out += '\n';
  render_servers(r, style, out);
  out += '\n';
  out += style.bold("Bandwidth") + "\n";
  out += fmt::format("  {}\n", r.bandwidth.summary);
  for (const std::string& error : r.errors) {
    out += '\n' + style.red("error: ") + error + '\n';
  }
  return out;
}

}  // namespace gb10tune::render
