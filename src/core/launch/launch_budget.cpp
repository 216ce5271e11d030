#include "gb10tune/launch/launch_budget.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/rpc/node_plan.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "gb10tune/util/size_option.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::launch {

namespace {

// --cache-ram -1: llama-server (tools/server, server_prompt_cache) then drops the byte limit
// and keeps only its token limit: saved prompt states of at most n_ctx tokens in total. That
// is bounded by n_ctx cells of KV state (plus the MTP draft context's), so it is planned at
// that size. Each saved state of a model with recurrent layers also carries a whole recurrent
// state, however short the prompt, so there nothing bounds the cache but a failed allocation:
// refused on GB10 (the cache shares the one memory with the GPU's buffers), elsewhere planned
// as everything the plan leaves, and said so. Returns the plan to use.
Expected<plan::MemoryPlan> plan_unbounded_cache(const model::ModelFacts& model,
                                                plan::PlanConfig& config,
                                                const plan::PlanBudget& budget,
                                                const plan::MemoryPlan& first, bool gb10) {
  if (model.is_hybrid()) {
    if (gb10) {
      return Error{
          "--cache-ram -1 (no limit): this model has recurrent layers, so every saved prompt "
          "carries a whole recurrent state and llama-server's prompt cache has no bound but a "
          "failed allocation; on GB10 it shares the one memory with the GPU's buffers. Give a "
          "limit in MiB, e.g. --cache-ram 24576 (K8)",
          ExitCode::usage};
    }
    const std::uint64_t left = first.available_bytes && *first.available_bytes > first.total_bytes
                                   ? *first.available_bytes - first.total_bytes
                                   : 0;
    config.cache_ram_bytes = left;
    auto plan = plan::make_plan(model, config, budget);
    if (plan) {
      plan->notes.push_back(fmt::format(
          "--cache-ram -1 (no limit): with recurrent layers the prompt cache has no bound, so "
          "it is planned as everything left ({}); give a limit in MiB to keep room",
          format_bytes_si(left)));
    }
    return plan;
  }
  const auto full = model.kv_bytes_per_cell(model::KvScope::full_attention, config.cache_k,
                                            config.cache_v, !config.flash_attention);
  const auto swa = model.kv_bytes_per_cell(model::KvScope::sliding_window, config.cache_k,
                                           config.cache_v, !config.flash_attention);
  if (!full || !swa) {
    return Error{!full ? full.error().message : swa.error().message, ExitCode::usage};
  }
  config.cache_ram_bytes = first.n_ctx * (*full + *swa) + first.mtp_kv_bytes;
  auto plan = plan::make_plan(model, config, budget);
  if (plan) {
    plan->notes.push_back(fmt::format(
        "--cache-ram -1 (no limit): llama-server then bounds the prompt cache by its token "
        "limit only (n_ctx = {} tokens of saved state), planned as {}",
        first.n_ctx, format_bytes_si(config.cache_ram_bytes)));
  }
  return plan;
}

}  // namespace

Expected<LaunchSizes> read_launch_sizes(const LaunchSettings& settings) {
  const auto overhead =
      size_option("--overhead", settings.text("overhead"), plan::kDefaultOverheadBytes);
  const auto reserve =
      size_option("--reserve", settings.text("reserve"), plan::kDefaultReserveBytes);
  if (!overhead || !reserve) {
    return !overhead ? overhead.error() : reserve.error();
  }
  const auto gpu_reserve =
      size_option("--gpu-reserve", settings.text("gpu_reserve"), plan::kDefaultGpuReserveBytes);
  if (!gpu_reserve) {
    return gpu_reserve.error();
  }
  const auto rpc_reserve =
      size_option("--rpc-reserve", settings.text("rpc_reserve"), rpc::kDefaultWorkerReserveBytes);
  if (!rpc_reserve) {
    return rpc_reserve.error();
  }
  return LaunchSizes{*overhead, *reserve, *gpu_reserve, *rpc_reserve};
}

Expected<plan::PlanBudget> launch_budget(const plan::PlanConfig& config, const LaunchSizes& sizes,
                                         const plan::LayerPlacement& placement,
                                         const platform::Sysroot& root, gpu::GpuBackend* gpu,
                                         const NoteSink& note) {
  plan::PlanBudget budget;
  budget.reserve_bytes = sizes.reserve;
  if (const auto memory = sys::read_meminfo(root)) {
    budget.mem_available = memory->available_bytes;
  } else {
    note(NoteKind::warning, memory.error().message + "; the plan is not checked");
  }
  // A CUDA server on discrete GPUs: device buffers against each GPU's free memory.
  if (config.backend != plan::PlanBackend::cuda || gpu == nullptr) {
    return budget;
  }
  const gpu::GpuReport devices = gpu->query_devices();
  const gpu::NvmlReport nvml = gpu->query_nvml();
  auto gpus = plan::gpu_budgets(devices, nvml, placement.devices, sizes.gpu_reserve);
  if (!gpus) {
    return gpus.error();
  }
  budget.gpus = std::move(*gpus);
  // The projector's GPU (CUDA0 unless -mmdev) may be one --device left out.
  const std::string projector_gpu =
      config.projector_device.empty() ? std::string("CUDA0") : config.projector_device;
  if (config.projector && config.projector_offload && !budget.gpus.empty() &&
      std::none_of(budget.gpus.begin(), budget.gpus.end(),
                   [&](const plan::GpuBudget& g) { return g.name == projector_gpu; })) {
    auto chosen = plan::gpu_budgets(devices, nvml, {projector_gpu}, sizes.gpu_reserve);
    if (!chosen) {
      return Error{fmt::format("--mmproj-device {}: no such GPU here (llama.cpp names them "
                               "CUDA0, CUDA1, …); `llama-server --list-devices` shows them",
                               projector_gpu),
                   ExitCode::usage};
    }
    if (!chosen->empty()) {
      budget.projector_gpu = chosen->front();
    }
  }
  return budget;
}

HeadBudget take_head_budget(plan::PlanBudget& budget, const plan::PlanConfig& config, bool gb10) {
  HeadBudget head;
  head.mem_available = budget.mem_available;
  head.devices = std::move(budget.gpus);
  head.discrete = !head.devices.empty();  // the plan lists only discrete GPUs (device_plan)
  budget.gpus.clear();
  if (config.backend == plan::PlanBackend::cuda && head.devices.empty() && gb10) {
    // GB10's integrated GPU: llama.cpp splits by its free memory, which is MemAvailable (K19).
    head.devices.push_back(plan::GpuBudget{"CUDA0", "GB10 (integrated)", head.mem_available, 0});
  }
  budget.mem_available.reset();
  return head;
}

Expected<plan::MemoryPlan> make_launch_plan(const model::ModelFacts& model,
                                            plan::PlanConfig& config,
                                            const plan::PlanBudget& budget,
                                            const LaunchSettings& settings, bool gb10) {
  auto plan = plan::make_plan(model, config, budget);
  if (plan && settings.integer("cache_ram_mib") < 0 && !plan->estimate) {
    return plan_unbounded_cache(model, config, budget, *plan, gb10);
  }
  return plan;
}

bool budget_known(const plan::MemoryPlan& plan) {
  return plan.devices ? plan.devices->budgets_known : plan.available_bytes.has_value();
}

}  // namespace gb10tune::launch
