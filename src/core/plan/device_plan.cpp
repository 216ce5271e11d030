#include "gb10tune/plan/device_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "gb10tune/plan/memory_plan.hpp"

namespace gb10tune::plan {

std::uint32_t first_gpu_layer(std::uint32_t n_layer_all, std::optional<std::uint32_t> gpu_layers) {
  const std::uint32_t all = n_layer_all + 1;
  return gpu_layers && *gpu_layers < all ? all - *gpu_layers : 0;
}

namespace {

bool layer_loaded(const model::ModelFacts& model, bool mtp, std::int64_t layer) {
  if (layer == model::ModelFacts::kUnloaded) {
    return false;
  }
  if (layer < 0 || static_cast<std::size_t>(layer) >= model.layers.size()) {
    return true;
  }
  return !model.layers[static_cast<std::size_t>(layer)].mtp || mtp;
}

}  // namespace

bool cpu_holds_layer(const model::ModelFacts& model, bool mtp, std::int64_t layer,
                     std::uint32_t first_gpu) {
  if (!layer_loaded(model, mtp, layer)) {
    return false;
  }
  if (layer == model::ModelFacts::kInputLayer) {
    return true;
  }
  const std::int64_t index =
      layer == model::ModelFacts::kOutputLayer ? std::int64_t{model.block_count} : layer;
  return index >= 0 && index < std::int64_t{first_gpu};
}

LayerAssignment assign_layers(std::uint32_t n_layer_all, std::optional<std::uint32_t> gpu_layers,
                              const std::vector<float>& tensor_split,
                              const std::vector<GpuBudget>& gpus) {
  LayerAssignment out;
  out.device_of.assign(std::size_t{n_layer_all} + 1, -1);
  if (gpus.empty()) {
    return out;
  }
  const std::size_t n = gpus.size();
  // The split points, in float like llama.cpp: --tensor-split, else free memory (unknown
  // free memory: equal shares).
  std::vector<float> splits(n, 0.0f);
  const bool all_zero =
      std::all_of(tensor_split.begin(), tensor_split.end(), [](float x) { return x == 0.0f; });
  for (std::size_t i = 0; i < n; ++i) {
    if (!all_zero) {
      splits[i] = i < tensor_split.size() ? tensor_split[i] : 0.0f;
    } else {
      const bool known = std::all_of(gpus.begin(), gpus.end(),
                                     [](const GpuBudget& g) { return g.free_bytes.has_value(); });
      splits[i] = known ? static_cast<float>(*gpus[i].free_bytes) : 1.0f;
    }
  }
  float sum = 0.0f;
  for (float& split : splits) {
    sum += split;
    split = sum;
  }
  for (float& split : splits) {
    split /= sum;
  }
  const auto all = static_cast<std::int64_t>(n_layer_all) + 1;
  const std::int64_t start = first_gpu_layer(n_layer_all, gpu_layers);
  const std::int64_t active = all - start;
  for (std::int64_t il = 0; il < all; ++il) {
    if (il < start || il - start >= active) {
      continue;
    }
    const float at = static_cast<float>(il - start) / static_cast<float>(active);
    const auto it = std::upper_bound(splits.begin(), splits.end(), at);
    const auto device =
        std::min<std::ptrdiff_t>(it - splits.begin(), static_cast<std::ptrdiff_t>(n) - 1);
    out.device_of[static_cast<std::size_t>(il)] = static_cast<int>(device);
  }
  return out;
}

std::uint64_t layer_cache_bytes(const model::ModelFacts& model, const PlanConfig& config,
                                const MemoryPlan& plan, std::uint32_t il) {
  if (il >= model.layers.size()) {
    return 0;
  }
  const model::LayerFacts& layer = model.layers[il];
  const bool transposed = !config.flash_attention;
  const auto kv_cell = [&](gguf::GgmlType k, gguf::GgmlType v) -> std::uint64_t {
    const auto kb = gguf::ggml_bytes(k, layer.k_width);
    const auto vb = gguf::ggml_bytes(v, transposed ? model.v_width_max : layer.v_width);
    return kb && vb ? *kb + *vb : 0;  // make_plan already refused widths a type cannot hold
  };
  if (layer.mtp) {
    return config.mtp ? kv_cell(config.draft_cache_k, config.draft_cache_v) * plan.full_cells *
                            plan.streams
                      : 0;
  }
  if (layer.main_kv) {
    const std::uint64_t cells = layer.sliding_window ? plan.swa_cells : plan.full_cells;
    return kv_cell(config.cache_k, config.cache_v) * cells * plan.streams;
  }
  if (layer.recurrent && model.recurrent_layer_count > 0) {
    return model.recurrent_bytes_per_sequence / model.recurrent_layer_count * plan.recurrent_rows;
  }
  return 0;
}

std::uint64_t mapped_extra(const model::ModelFacts& model, const PlanConfig& config,
                           std::uint32_t first_gpu, const std::vector<bool>& repacked) {
  const auto mapped_on_cpu = [&](std::size_t i) {
    const auto& span = model.tensor_spans[i];
    return cpu_holds_layer(model, config.mtp, span.layer, first_gpu) &&
           !(i < repacked.size() && repacked[i]);
  };
  const auto offloaded = [&](std::int64_t layer) {
    return layer_loaded(model, config.mtp, layer) &&
           !cpu_holds_layer(model, config.mtp, layer, first_gpu);
  };
  std::uint64_t extra = 0;
  std::uint32_t files = 0;
  for (const auto& span : model.tensor_spans) {
    files = std::max(files, span.file + 1);
  }
  for (std::uint32_t file = 0; file < files; ++file) {
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t last = 0;
    for (std::size_t i = 0; i < model.tensor_spans.size(); ++i) {
      const auto& span = model.tensor_spans[i];
      if (span.file == file && mapped_on_cpu(i)) {
        first = std::min(first, span.offset);
        last = std::max(last, span.offset + span.bytes);
      }
    }
    for (const auto& span : model.tensor_spans) {
      if (span.file != file || !offloaded(span.layer) || last <= first) {
        continue;
      }
      const std::uint64_t from = std::max(first, span.offset);
      const std::uint64_t to = std::min(last, span.offset + span.bytes);
      extra += to > from ? to - from : 0;
    }
  }
  return extra;
}

namespace {

// One empty part per GPU of the budget.
std::vector<DevicePart> gpu_parts(const PlanBudget& budget) {
  std::vector<DevicePart> parts;
  for (const GpuBudget& gpu : budget.gpus) {
    DevicePart part;
    part.name = gpu.name;
    part.description = gpu.description;
    part.pci_bus_id = gpu.pci_bus_id;
    part.free_bytes = gpu.free_bytes;
    part.reserve_bytes = gpu.reserve_bytes;
    parts.push_back(std::move(part));
  }
  return parts;
}

// The projector's GPU (clip_ctx): one of the parts, or another one, added, that then holds only
// the projector and its CUDA context; -1 when the projector is not on a GPU.
int projector_part(std::vector<DevicePart>& gpus, const MemoryPlan& plan,
                   const PlanBudget& budget) {
  if (!plan.projector || !plan.projector->on_device) {
    return -1;
  }
  const auto it = std::find_if(gpus.begin(), gpus.end(), [&](const DevicePart& p) {
    return p.name == plan.projector->device;
  });
  if (it != gpus.end()) {
    return static_cast<int>(it - gpus.begin());
  }
  DevicePart part;
  part.name = plan.projector->device;
  if (budget.projector_gpu && budget.projector_gpu->name == part.name) {
    part.description = budget.projector_gpu->description;
    part.pci_bus_id = budget.projector_gpu->pci_bus_id;
    part.free_bytes = budget.projector_gpu->free_bytes;
    part.reserve_bytes = budget.projector_gpu->reserve_bytes;
  } else {
    part.reserve_bytes =
        budget.gpus.empty() ? kDefaultGpuReserveBytes : budget.gpus.front().reserve_bytes;
  }
  gpus.push_back(std::move(part));
  return static_cast<int>(gpus.size()) - 1;
}

// Each block's weights and cache, and the output layer's weights, on the part that holds them.
void place_layers(DevicePlan& out, const model::ModelFacts& model, const PlanConfig& config,
                  const MemoryPlan& plan, const LayerAssignment& where) {
  HostPart& host = out.host;
  host.weights_bytes = model.input_weight_bytes;  // the input layer stays on the CPU
  for (std::uint32_t il = 0; il < model.block_count; ++il) {
    const model::LayerFacts* layer = il < model.layers.size() ? &model.layers[il] : nullptr;
    const bool loaded = layer == nullptr || !layer->mtp || config.mtp;
    const std::uint64_t weights =
        loaded && il < model.layer_weight_bytes.size() ? model.layer_weight_bytes[il] : 0;
    const std::uint64_t cache = layer_cache_bytes(model, config, plan, il);
    const int device = where.device_of[il];
    if (device < 0) {
      host.layers.push_back(il);
      host.weights_bytes += weights;
      host.cache_bytes += cache;
    } else {
      DevicePart& part = out.gpus[static_cast<std::size_t>(device)];
      part.layers.push_back(il);
      part.weights_bytes += weights;
      part.cache_bytes += cache;
    }
  }
  const int output = where.output_device();
  if (output < 0) {
    host.output_layer = true;
    host.weights_bytes += model.output_weight_bytes;
  } else {
    out.gpus[static_cast<std::size_t>(output)].output_layer = true;
    out.gpus[static_cast<std::size_t>(output)].weights_bytes += model.output_weight_bytes;
  }
}

// The CPU's weights may be repacked into a copy (with --no-host: cpu_repack.hpp); the
// originals outside the mapped range leave memory.
void place_repack(HostPart& host, const model::ModelFacts& model, const PlanConfig& config,
                  std::uint32_t first_gpu) {
  const RepackPlan repack = plan_cpu_repack(model, config.repack, [&](std::int64_t layer) {
    return cpu_holds_layer(model, config.mtp, layer, first_gpu);
  });
  host.repack_bytes = repack.buffer_bytes;
  host.weights_bytes -= std::min(host.weights_bytes, repack.released_bytes);
  host.mapped_extra_bytes = mapped_extra(model, config, first_gpu, repack.repacked);
}

// The projector's bytes: all of them, and the part that stays in host memory when it runs on
// a GPU (its input image).
struct ProjectorShare {
  int device = -1;  // the part of the GPU that holds it, -1 for none
  std::uint64_t bytes = 0;
  std::uint64_t host_bytes = 0;
};

// Which GPUs compute: the ones that hold layers, and the first one with -ngl 0.
struct GpuCompute {
  bool any_layers = false;     // a GPU holds a layer (or computes the CPU layers' big ops)
  int op_offload_device = -1;  // with -ngl 0, the GPU that runs the CPU layers' big-batch ops
};

// Every GPU that holds a layer gets a CUDA context and a compute buffer for its part of the
// graph (ggml_backend_sched: one buffer per backend), sized here as the whole graph's
// device buffer; the MTP draft context's on the device of the MTP block. The projector's
// weights and compute buffer go to its GPU, which needs a CUDA context too.
GpuCompute size_gpu_parts(DevicePlan& out, const model::ModelFacts& model, const PlanConfig& config,
                          const MemoryPlan& plan, const PlanBudget& budget,
                          const LayerAssignment& where, const ProjectorShare& projector) {
  const int mtp_device =
      model.has_mtp() && config.mtp ? where.device_of[model.main_layer_count] : -1;
  // With -ngl 0 no GPU holds a layer, but the CUDA backend of the first one still runs the
  // big-batch ops of the CPU layers (op offload): its compute buffer and CUDA context.
  const bool none_offloaded = std::none_of(out.gpus.begin(), out.gpus.end(), [](const auto& p) {
    return !p.layers.empty() || p.output_layer;
  });
  GpuCompute compute;
  compute.op_offload_device = none_offloaded && !budget.gpus.empty() ? 0 : -1;
  for (std::size_t i = 0; i < out.gpus.size(); ++i) {
    DevicePart& part = out.gpus[i];
    const bool computes = static_cast<int>(i) == compute.op_offload_device;
    const bool holds_layers = !part.layers.empty() || part.output_layer || computes;
    const bool holds_projector = static_cast<int>(i) == projector.device;
    if (!holds_layers && !holds_projector) {
      continue;
    }
    compute.any_layers = compute.any_layers || holds_layers;
    if (holds_layers) {
      part.compute_bytes = plan.buffers.main.compute_device;
    }
    if (static_cast<int>(i) == mtp_device) {
      part.compute_bytes += plan.buffers.mtp.compute_device;
    }
    // Measured on an H200 (docs/memory-plan.md): a device with only the output layer loads
    // no attention kernels (CUDA loads modules lazily) and held 64 MiB less; one that only
    // runs the CPU layers' offloaded ops (-ngl 0) held 518.5 MiB beside its compute buffer,
    // and a device with the projector alone is planned the same way (not measured).
    constexpr std::uint64_t kOutputOnlyKernels = 64ull << 20;
    part.runtime_bytes = part.layers.empty() && plan.runtime.device > kOutputOnlyKernels
                             ? plan.runtime.device - kOutputOnlyKernels
                             : plan.runtime.device;
    part.service_bytes =
        std::min(part.runtime_bytes, plan.runtime.device - plan.runtime.device_at_load);
    if (holds_projector) {
      part.projector_bytes = projector.bytes - projector.host_bytes;
    }
    part.total_bytes = part.weights_bytes + part.cache_bytes + part.compute_bytes +
                       part.runtime_bytes + part.projector_bytes;
  }
  return compute;
}

// The host part's buffers, projector, runtime, caches and total.
void size_host_part(HostPart& host, const MemoryPlan& plan, const ProjectorShare& projector,
                    const GpuCompute& compute) {
  host.buffers_bytes =
      plan.buffers.main.compute_host + plan.buffers.mtp.compute_host + plan.output_bytes;
  if (plan.projector && projector.device < 0) {
    host.projector_bytes = projector.bytes;  // --no-mmproj-offload: in host memory
  } else if (plan.projector) {
    host.projector_bytes = projector.host_bytes;
  }
  if (!compute.any_layers) {
    // A CPU-only placement computes on the CPU: the device part of the graph is host memory.
    host.buffers_bytes += plan.buffers.main.compute_device + plan.buffers.mtp.compute_device;
  } else if (compute.op_offload_device >= 0) {
    host.buffers_bytes += plan.buffers.mtp.compute_device;
  }
  host.runtime_bytes = plan.runtime.host;
  host.service_bytes = plan.runtime.host - plan.runtime.host_at_load;
  host.cache_ram_bytes = plan.cache_ram_bytes;
  host.overhead_bytes = plan.overhead_bytes;
  host.calibration_bytes = plan.calibration_bytes;
  const std::uint64_t sum = host.weights_bytes + host.mapped_extra_bytes + host.repack_bytes +
                            host.cache_bytes + host.buffers_bytes + host.projector_bytes +
                            host.runtime_bytes + host.cache_ram_bytes + host.overhead_bytes;
  const std::uint64_t cut =
      host.calibration_bytes < 0 ? static_cast<std::uint64_t>(-host.calibration_bytes) : 0;
  host.total_bytes = host.calibration_bytes < 0
                         ? (sum > cut ? sum - cut : 0)
                         : sum + static_cast<std::uint64_t>(host.calibration_bytes);
}

// The device and host parts for one assignment, without verdicts.
DevicePlan split_with(const model::ModelFacts& model, const PlanConfig& config,
                      const MemoryPlan& plan, const PlanBudget& budget,
                      std::optional<std::uint32_t> gpu_layers) {
  DevicePlan out;
  const std::uint32_t n_layer_all = model.block_count;
  out.layer_count = n_layer_all + 1;
  const LayerAssignment where =
      assign_layers(n_layer_all, gpu_layers, config.tensor_split, budget.gpus);
  out.gpu_layers = gpu_layers ? std::min(*gpu_layers, out.layer_count) : out.layer_count;
  out.gpus = gpu_parts(budget);
  ProjectorShare projector;
  projector.device = projector_part(out.gpus, plan, budget);
  projector.bytes = plan.projector_bytes + plan.projector_compute_bytes;
  // On a GPU the projector's input image stays in a host buffer.
  projector.host_bytes =
      plan.projector && plan.projector->on_device ? plan.projector->host_compute_bytes : 0;
  place_layers(out, model, config, plan, where);
  place_repack(out.host, model, config, first_gpu_layer(n_layer_all, gpu_layers));
  const GpuCompute compute = size_gpu_parts(out, model, config, plan, budget, where, projector);
  size_host_part(out.host, plan, projector, compute);
  return out;
}

std::optional<std::int64_t> margin(std::optional<std::uint64_t> available, std::uint64_t total) {
  if (!available) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(*available) - static_cast<std::int64_t>(total);
}

// Fills the budgets and verdicts of every part; true when every GPU that holds anything fits
// (the host is not part of that answer).
bool judge(DevicePlan& out, const PlanBudget& budget) {
  bool gpus_fit = true;
  out.budgets_known = budget.mem_available.has_value();
  std::int64_t least = std::numeric_limits<std::int64_t>::max();
  for (DevicePart& part : out.gpus) {
    if (part.free_bytes) {
      part.available_bytes =
          *part.free_bytes > part.reserve_bytes ? *part.free_bytes - part.reserve_bytes : 0;
    }
    part.margin_bytes = margin(part.available_bytes, part.total_bytes);
    part.fits = part.margin_bytes && *part.margin_bytes >= 0;
    if (part.total_bytes == 0) {
      part.fits = true;  // nothing on it
      continue;
    }
    if (!part.available_bytes) {
      out.budgets_known = false;
      gpus_fit = false;
      continue;
    }
    gpus_fit = gpus_fit && part.fits;
    if (*part.margin_bytes < least) {
      least = *part.margin_bytes;
      out.tightest = part.name;
    }
  }
  HostPart& host = out.host;
  if (budget.mem_available) {
    host.available_bytes = *budget.mem_available > budget.reserve_bytes
                               ? *budget.mem_available - budget.reserve_bytes
                               : 0;
  }
  host.margin_bytes = margin(host.available_bytes, host.total_bytes);
  host.fits = host.margin_bytes && *host.margin_bytes >= 0;
  if (host.margin_bytes && *host.margin_bytes < least) {
    out.tightest = "host";
  }
  out.fits = out.budgets_known && gpus_fit && host.fits;
  return gpus_fit;
}

}  // namespace

DevicePlan split_over_devices(const model::ModelFacts& model, const PlanConfig& config,
                              const MemoryPlan& plan, const PlanBudget& budget) {
  DevicePlan out = split_with(model, config, plan, budget, config.gpu_layers);
  const bool gpus_fit = judge(out, budget);
  const bool gpus_known = std::all_of(out.gpus.begin(), out.gpus.end(), [](const DevicePart& p) {
    return p.total_bytes == 0 || p.available_bytes.has_value();
  });
  if (!gpus_fit && gpus_known) {
    // The largest -ngl (same split) with which every GPU fits; fewer layers only move bytes
    // to the host, whose own verdict is separate.
    for (std::uint32_t ngl = out.gpu_layers; ngl-- > 0;) {
      DevicePlan fewer = split_with(model, config, plan, budget, ngl);
      if (judge(fewer, budget)) {
        out.max_gpu_layers_that_fit = ngl;
        break;
      }
    }
    if (!out.max_gpu_layers_that_fit) {
      out.max_gpu_layers_that_fit = 0;
    }
  }
  return out;
}

}  // namespace gb10tune::plan
