// What a launch plans against: the sizes its settings give (reserves, the margin), the budget
// of this machine (MemAvailable minus the reserve; each discrete GPU's free memory minus its
// reserve for a CUDA plan), and the memory plan itself, with --cache-ram -1 sized.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/launch/launch_request.hpp"
#include "gb10tune/launch/profile.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/device_plan.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// The size settings, in bytes.
struct LaunchSizes {
  std::uint64_t overhead = 0;     // overhead: the margin above the modelled buffers
  std::uint64_t reserve = 0;      // reserve: kept for the system
  std::uint64_t gpu_reserve = 0;  // gpu_reserve: kept free on each discrete GPU
  std::uint64_t rpc_reserve = 0;  // rpc_reserve: kept free on each RPC worker
};

// Reads the size settings; a usage Error naming the option of the first that is not a size.
Expected<LaunchSizes> read_launch_sizes(const LaunchSettings& settings);

// The budget of this machine for `config`: MemAvailable (under `root`; unknown is a warning to
// `note`: the plan is then not checked) minus the reserve, and with the CUDA backend each GPU
// `gpu` reports that the placement uses, with the projector's GPU when the placement leaves it
// out. A usage Error for a --device or --mmproj-device that names no GPU here.
Expected<plan::PlanBudget> launch_budget(const plan::PlanConfig& config, const LaunchSizes& sizes,
                                         const plan::LayerPlacement& placement,
                                         const platform::Sysroot& root, gpu::GpuBackend* gpu,
                                         const NoteSink& note);

// The head's part of a budget across RPC workers: its MemAvailable and its own devices.
struct HeadBudget {
  std::optional<std::uint64_t> mem_available;
  std::vector<plan::GpuBudget> devices;
  bool discrete = false;  // `devices` are discrete GPUs, each with memory of its own
};

// Over RPC the budgets are per node: takes the head's MemAvailable and GPUs out of `budget`
// (the one-machine plan then only sizes the buffers) and returns them for the node plan; a GB10
// head's integrated GPU is one device whose free memory is MemAvailable (K19).
HeadBudget take_head_budget(plan::PlanBudget& budget, const plan::PlanConfig& config, bool gb10);

// The plan of `config` against `budget`. --cache-ram -1 (cache_ram_mib < 0) is sized as
// llama-server bounds it: n_ctx cells of saved state; with recurrent layers nothing bounds it,
// so it is refused on GB10 (usage Error) and planned as everything left elsewhere, with a note.
// The Errors of make_plan otherwise. `config` gets the prompt cache size planned.
Expected<plan::MemoryPlan> make_launch_plan(const model::ModelFacts& model,
                                            plan::PlanConfig& config,
                                            const plan::PlanBudget& budget,
                                            const LaunchSettings& settings, bool gb10);

// Whether `plan`'s budget is known: every device's with a per-device plan, else MemAvailable.
bool budget_known(const plan::MemoryPlan& plan);

}  // namespace gb10tune::launch
