// The machine a plan before a download is for (gb10tune plan --machine): this one, a built-in
// description (gb10: one DGX Spark; gb10x2: two over RPC) or a JSON file. A description becomes
// a sysroot held in memory (its /proc/meminfo, /proc/cpuinfo and the NVIDIA driver's GPU list),
// so that launch's own planner reads it as it reads a machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/launch/described_gpus.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/rpc/rpc_client.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// What a plan needs to know of a machine.
struct TargetMachine {
  std::string name;                   // "this", "gb10", "gb10x2" or the file given
  std::string description;            // one line for the plan's header
  bool live = false;                  // this machine: read through the caller's sysroot and GPUs
  std::uint64_t memory_bytes = 0;     // MemTotal
  std::uint64_t available_bytes = 0;  // MemAvailable: what the plan budgets from
  std::string gpu;                    // the GPU's name ("NVIDIA GB10"); "" = none
  double bandwidth_bytes_per_second = 0;    // the decode path's read bandwidth; 0 = unknown
  std::string bandwidth_source;             // where it came from
  std::string backend = "cpu";              // the llama.cpp build assumed: "cuda" or "cpu"
  std::optional<std::string> reserve;       // the system reserve (a size, as --reserve)
  bool gb10_cpu = false;                    // the GB10's CPU (10 Cortex-X925 + 10 Cortex-A725)
  std::uint32_t nodes = 1;                  // machines over RPC (gb10x2: 2)
  std::vector<DescribedGpu> discrete_gpus;  // a description's GPUs with memory of their own
  bool benchable = false;  // this machine, whose NVIDIA driver lists a GPU: probe can measure it
};

// Takes `gbps` (GB/s, > 0) as the decode path's read bandwidth of `machine` (plan's
// --bandwidth), in place of the description's or the saved probe's.
void give_bandwidth(TargetMachine& machine, double gbps);

// GB10's facts (DESIGN.md K1, K19): 121 GB of unified memory (MemTotal 118164064 kB), of which
// an idle machine shows about 112.5 GB MemAvailable, 237 GB/s read on the device path, GB10's
// CPU, a CUDA build, and its GPU in the driver's /proc entry, as a GB10 with its driver lists it:
// launch's planner plans the CUDA backend with the integrated GPU's single pool (K19).
TargetMachine gb10_machine();

// The machine `spec` names: "this" (MemAvailable and GPUs read under `root`; the bandwidth from
// the probe saved in the state directory of `env`, else unknown), "gb10", "gb10x2", or the path
// of a JSON description (docs/plan.md: memory_gb, available_gb, gpu or gpus, bandwidth_gbps,
// backend, reserve, gb10_cpu). A usage Error naming the file and the field for a description
// that cannot be read or is wrong, and for a spec that is none of these.
Expected<TargetMachine> find_target_machine(std::string_view spec, const platform::Sysroot& root,
                                            const platform::Environment& env);

// The address plan gives gb10x2's worker (the direct link of docs/rpc.md); later workers take
// the ports after it.
inline constexpr std::string_view kDescribedWorkerHost = "192.168.100.2";
inline constexpr int kDescribedWorkerPort = 50052;

// The RPC workers of `machine` as they would answer launch --rpc: nodes − 1 workers of the
// protocol launch knows, each one device reporting the machine's MemAvailable free of its
// MemTotal (a GB10 worker's CUDA0, K19). Empty for one node. Never fails.
std::vector<rpc::WorkerInfo> described_workers(const TargetMachine& machine);

// The usage Error of description `file`: "machine description FILE: WHY; see docs/plan.md …".
Error machine_description_error(std::string_view file, const std::string& why);

// The sysroot launch's planner reads for a described machine: /proc/meminfo, /proc/cpuinfo
// (GB10's cores when gb10_cpu) and the driver's entry naming each GPU. Never fails.
platform::Sysroot machine_sysroot(const TargetMachine& machine);

}  // namespace gb10tune::launch
