// The machines a plan is for: this one, the built-in descriptions and JSON files, and the
// sysroot in memory that stands for a described one.
#include "gb10tune/launch/target_machine.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "gb10tune/bench/server_bench_setup.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "gb10tune/util/json_field.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::launch {

namespace {

// GB10's CPU features, as its kernel lists them (the same on every core).
constexpr std::string_view kGb10Features =
    "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma "
    "lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm sb paca pacg "
    "dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 i8mm "
    "bf16 dgh bti ecv afp wfxt";

// /proc/cpuinfo of GB10: 10 Cortex-A725 (part 0xd87) and 10 Cortex-X925 (part 0xd85) cores.
std::string gb10_cpuinfo() {
  std::string text;
  for (int cpu = 0; cpu < 20; ++cpu) {
    text += fmt::format(
        "processor\t: {}\nBogoMIPS\t: 2000.00\nFeatures\t: {}\nCPU implementer\t: 0x41\n"
        "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: {}\nCPU revision\t: 1\n\n",
        cpu, kGb10Features, cpu < 10 ? "0xd87" : "0xd85");
  }
  return text;
}

// A size in GB (decimal) from field `name`, which must be a positive number.
Expected<std::uint64_t> gigabytes(const nlohmann::json& doc, const char* name,
                                  std::string_view file) {
  double value = 0;
  std::string error;
  if (!get_field(doc, name, value, error)) {
    return machine_description_error(file, error);
  }
  if (!(value > 0) || value > 1e6) {
    return machine_description_error(file,
                                     fmt::format("'{}' must be a number of GB above 0", name));
  }
  return static_cast<std::uint64_t>(std::llround(value * 1e9));
}

Status check_known_fields(const nlohmann::json& doc, std::string_view file) {
  static const std::set<std::string> known{"name",    "memory_gb", "available_gb",
                                           "gpu",     "gpus",      "bandwidth_gbps",
                                           "backend", "reserve",   "gb10_cpu"};
  for (const auto& item : doc.items()) {
    if (!known.contains(item.key())) {
      return machine_description_error(
          file, fmt::format("unknown field '{}' (the fields: name, memory_gb, "
                            "available_gb, gpu, gpus, bandwidth_gbps, "
                            "backend, reserve, gb10_cpu)",
                            item.key()));
    }
  }
  return {};
}

// The "gpus" list: an integrated GPU is the machine's `gpu` (one pool); discrete ones keep their
// own memory. The first discrete GPU's bandwidth is the decode path's unless the machine gives
// bandwidth_gbps (read after this).
Status read_gpus(const nlohmann::json& doc, std::string_view file, TargetMachine& m) {
  if (!doc.contains("gpus")) {
    return {};
  }
  if (doc.contains("gpu")) {
    return machine_description_error(file,
                                     "give 'gpu' (one integrated GPU by name) or 'gpus', "
                                     "not both");
  }
  auto gpus = read_described_gpus(doc["gpus"], file);
  if (!gpus) {
    return gpus.error();
  }
  if (gpus->front().integrated) {
    m.gpu = gpus->front().name;
  } else {
    m.discrete_gpus = std::move(*gpus);
  }
  const DescribedGpu& first = m.discrete_gpus.empty() ? gpus->front() : m.discrete_gpus.front();
  if (first.bandwidth_bytes_per_second > 0) {
    m.bandwidth_bytes_per_second = first.bandwidth_bytes_per_second;
    m.bandwidth_source = "the description's gpus[0].bandwidth_gbps";
  }
  return {};
}

// The optional fields of a description.
Status read_optional_fields(const nlohmann::json& doc, std::string_view file, TargetMachine& m) {
  std::string error;
  if (doc.contains("gpu") && !get_field(doc, "gpu", m.gpu, error)) {
    return machine_description_error(file, error);
  }
  if (doc.contains("backend") && !get_field(doc, "backend", m.backend, error)) {
    return machine_description_error(file, error);
  }
  if (m.backend != "cuda" && m.backend != "cpu") {
    return machine_description_error(file,
                                     fmt::format("'backend' is '{}'; give cuda or cpu", m.backend));
  }
  if (doc.contains("gb10_cpu") && !get_field(doc, "gb10_cpu", m.gb10_cpu, error)) {
    return machine_description_error(file, error);
  }
  if (doc.contains("reserve")) {
    std::string reserve;
    if (!get_field(doc, "reserve", reserve, error) || !parse_size(reserve)) {
      return machine_description_error(
          file, error.empty() ? "'reserve' must be a size such as \"12G\"" : error);
    }
    m.reserve = reserve;
  }
  if (Status gpus = read_gpus(doc, file, m); !gpus) {
    return gpus;
  }
  if (doc.contains("bandwidth_gbps")) {
    double gbps = 0;
    if (!get_field(doc, "bandwidth_gbps", gbps, error) || !(gbps > 0)) {
      return machine_description_error(file,
                                       error.empty() ? "'bandwidth_gbps' must be above 0" : error);
    }
    m.bandwidth_bytes_per_second = gbps * 1e9;
    m.bandwidth_source = "the description's bandwidth_gbps";
  }
  return {};
}

Expected<TargetMachine> read_description(const std::string& file) {
  const auto text = read_text_file(file);
  if (!text) {
    return Error{fmt::format("--machine {}: no such file, and not one of this, gb10, gb10x2; give "
                             "one of those or a JSON description (docs/plan.md)",
                             file),
                 ExitCode::usage};
  }
  const auto doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    return machine_description_error(file, "it is not a JSON object");
  }
  if (Status known = check_known_fields(doc, file); !known) {
    return known.error();
  }
  TargetMachine m;
  m.name = file;
  const auto memory = gigabytes(doc, "memory_gb", file);
  if (!memory) {
    return memory.error();
  }
  m.memory_bytes = *memory;
  m.available_bytes = *memory;
  if (doc.contains("available_gb")) {
    const auto available = gigabytes(doc, "available_gb", file);
    if (!available) {
      return available.error();
    }
    if (*available > *memory) {
      return machine_description_error(file, "'available_gb' is more than 'memory_gb'");
    }
    m.available_bytes = *available;
  }
  if (Status optional = read_optional_fields(doc, file, m); !optional) {
    return optional.error();
  }
  m.description = doc.value("name", std::string("described machine"));
  return m;
}

// This machine, as launch would see it: its MemAvailable and GPUs under `root`.
Expected<TargetMachine> this_machine(const platform::Sysroot& root,
                                     const platform::Environment& env) {
  TargetMachine m;
  m.name = "this";
  m.live = true;
  m.description = root.is_live() ? "this machine" : "the machine under " + root.root().string();
  if (const auto mem = sys::read_meminfo(root)) {
    m.memory_bytes = mem->total_bytes;
    m.available_bytes = mem->available_bytes;
  }
  if (const auto bandwidth = bench::saved_probe_bandwidth(env)) {
    m.bandwidth_bytes_per_second = *bandwidth;
    m.bandwidth_source = "the saved probe's cudaMalloc read";
  }
  m.benchable = sys::nvidia_gpu_count(root) > 0;
  return m;
}

}  // namespace

void give_bandwidth(TargetMachine& machine, double gbps) {
  machine.bandwidth_bytes_per_second = gbps * 1e9;
  machine.bandwidth_source = "--bandwidth";
}

TargetMachine gb10_machine() {
  TargetMachine m;
  m.name = "gb10";
  m.description =
      "NVIDIA GB10 (DGX Spark) as captured: 121 GB unified memory, 237 GB/s device read";
  m.memory_bytes = 118164064ull * 1024;
  m.available_bytes = 109876544ull * 1024;
  m.bandwidth_bytes_per_second = 237e9;
  m.bandwidth_source = "GB10's device path (K1)";
  m.backend = "cuda";
  m.gpu = "NVIDIA GB10";
  m.gb10_cpu = true;
  return m;
}

Expected<TargetMachine> find_target_machine(std::string_view spec, const platform::Sysroot& root,
                                            const platform::Environment& env) {
  if (spec == "this") {
    return this_machine(root, env);
  }
  if (spec == "gb10") {
    return gb10_machine();
  }
  if (spec == "gb10x2") {
    TargetMachine m = gb10_machine();
    m.name = "gb10x2";
    m.nodes = 2;
    m.description = "two NVIDIA GB10 (DGX Spark) over llama.cpp's RPC backend";
    return m;
  }
  return read_description(std::string(spec));
}

Error machine_description_error(std::string_view file, const std::string& why) {
  return Error{
      fmt::format("machine description {}: {}; see docs/plan.md for its fields", file, why),
      ExitCode::usage};
}

std::vector<rpc::WorkerInfo> described_workers(const TargetMachine& machine) {
  std::vector<rpc::WorkerInfo> workers;
  for (std::uint32_t i = 1; i < machine.nodes; ++i) {
    rpc::WorkerInfo worker;
    worker.endpoint = {std::string(kDescribedWorkerHost),
                       kDescribedWorkerPort + static_cast<int>(i) - 1};
    worker.version = rpc::kKnownVersion;
    worker.devices.push_back({machine.available_bytes, machine.memory_bytes});
    workers.push_back(std::move(worker));
  }
  return workers;
}

platform::Sysroot machine_sysroot(const TargetMachine& machine) {
  std::map<std::string, std::string> files;
  const std::uint64_t free_kb = machine.available_bytes / 1024;
  files["/proc/meminfo"] = fmt::format(
      "MemTotal:       {} kB\nMemFree:        {} kB\n"
      "MemAvailable:   {} kB\n",
      machine.memory_bytes / 1024, free_kb, free_kb);
  if (machine.gb10_cpu) {
    files["/proc/cpuinfo"] = gb10_cpuinfo();
  }
  std::vector<std::string> gpus;
  if (!machine.gpu.empty()) {
    gpus.push_back(machine.gpu);
  }
  for (const DescribedGpu& gpu : machine.discrete_gpus) {
    gpus.push_back(gpu.name);
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string bus = described_pci_bus_id(i);
    files["/proc/driver/nvidia/gpus/" + bus + "/information"] =
        fmt::format("Model: \t\t {}\nBus Location: \t {}\n", gpus[i], bus);
  }
  return platform::Sysroot::in_memory(machine.name, std::move(files));
}

}  // namespace gb10tune::launch
