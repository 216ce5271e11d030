// The plan per machine: the layer placement of plan::assign_layers over the RPC devices and the
// head's own, then each node's weights, caches, compute buffers and process against its budget.
#include "gb10tune/rpc/node_plan.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

namespace gb10tune::rpc {

namespace {

// The buffers of the graph split over devices: what make_plan sizes for a GPU-offloaded graph
// (the device part per device, the inputs in host memory), whatever the head's own backend.
plan::BufferPlan offloaded_buffers(const model::ModelFacts& model, const plan::PlanConfig& config,
                                   const plan::MemoryPlan& plan) {
  if (config.backend == plan::PlanBackend::cuda) {
    return plan.buffers;
  }
  plan::PlanConfig offloaded = config;
  offloaded.backend = plan::PlanBackend::cuda;
  offloaded.projector.reset();
  auto again = plan::make_plan(model, offloaded, plan::PlanBudget{});
  return again ? again->buffers : plan.buffers;
}

std::optional<std::int64_t> node_margin_of(std::optional<std::uint64_t> available,
                                           std::uint64_t total) {
  if (!available) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(*available) - static_cast<std::int64_t>(total);
}

// A budget's verdict: free − reserve against the total. `Part` is a NodePart or a head GPU's
// plan::DevicePart (the same fields).
template <typename Part>
void judge_node(Part& part) {
  if (part.free_bytes) {
    part.available_bytes =
        *part.free_bytes > part.reserve_bytes ? *part.free_bytes - part.reserve_bytes : 0;
  }
  part.margin_bytes = node_margin_of(part.available_bytes, part.total_bytes);
  part.fits = part.margin_bytes && *part.margin_bytes >= 0;
}

// llama.cpp's device list (every worker's devices, then the head's own) and the node of each.
struct NodeDevices {
  std::vector<plan::GpuBudget> devices;
  std::vector<std::size_t> node_of_device;
  std::size_t head_index = 0;         // the head's node, after the workers'
  std::size_t first_head_device = 0;  // the head's own devices follow the workers'
  bool head_discrete = false;         // they are discrete GPUs, each with its own part

  // The node of `device` (of the assignment: -1 the head's CPU).
  std::size_t node_of(int device) const {
    return device < 0 ? head_index : node_of_device[static_cast<std::size_t>(device)];
  }
  // The index of `device` among the head's discrete GPUs (NodePart::gpus); -1 for any other.
  int head_gpu_of(int device) const {
    if (!head_discrete || device < 0 || static_cast<std::size_t>(device) < first_head_device) {
      return -1;
    }
    return device - static_cast<int>(first_head_device);
  }
};

// One node per worker, then the head's, and the devices they offer.
NodeDevices list_nodes(NodePlan& out, const NodeBudgets& budgets) {
  NodeDevices listed;
  for (std::size_t w = 0; w < budgets.workers.size(); ++w) {
    const WorkerInfo& worker = budgets.workers[w];
    NodePart part;
    part.node = worker.endpoint.to_string();
    part.reserve_bytes = budgets.worker_reserve_bytes;
    part.free_bytes = worker.free_bytes();
    part.free_is_total = !worker.devices.empty() && worker.free_bytes() == worker.total_bytes();
    for (const DeviceMemory& memory : worker.devices) {
      plan::GpuBudget device;
      device.name = "RPC" + std::to_string(listed.devices.size());
      device.description = part.node;
      // A device that reports nothing is split by the head's CPU memory (llama.cpp #18577).
      device.free_bytes = memory.free_bytes == 0 && memory.total_bytes == 0
                              ? budgets.head_mem_available
                              : std::optional<std::uint64_t>(memory.free_bytes);
      part.devices.push_back(device.name);
      listed.devices.push_back(device);
      listed.node_of_device.push_back(w);
    }
    out.nodes.push_back(std::move(part));
  }
  listed.head_index = out.nodes.size();
  NodePart head;
  head.node = "head";
  head.input_layer = true;
  head.reserve_bytes = budgets.head_reserve_bytes;
  head.free_bytes = budgets.head_mem_available;
  head.devices.push_back("CPU");
  listed.first_head_device = listed.devices.size();
  listed.head_discrete = budgets.head_gpus_discrete && !budgets.head_devices.empty();
  for (const plan::GpuBudget& own : budgets.head_devices) {
    head.devices.push_back(own.name);
    listed.devices.push_back(own);
    listed.node_of_device.push_back(listed.head_index);
    if (listed.head_discrete) {
      plan::DevicePart gpu;
      gpu.name = own.name;
      gpu.description = own.description;
      gpu.pci_bus_id = own.pci_bus_id;
      gpu.free_bytes = own.free_bytes;
      gpu.reserve_bytes = own.reserve_bytes;
      head.gpus.push_back(std::move(gpu));
    }
  }
  out.nodes.push_back(std::move(head));
  return listed;
}

// Which devices hold a layer, and whether the head's CPU does.
struct DeviceUse {
  std::vector<bool> device_used;
  bool head_cpu_layers = false;
};

// Each block's weights and cache, and the output layer's weights, on the node that holds them.
DeviceUse place_node_layers(NodePlan& out, const model::ModelFacts& model,
                            const plan::PlanConfig& config, const plan::MemoryPlan& plan,
                            const plan::LayerAssignment& where, const NodeDevices& listed) {
  DeviceUse use;
  use.device_used.assign(listed.devices.size(), false);
  out.nodes[listed.head_index].weights_bytes =
      model.input_weight_bytes;  // the input layer: the head's CPU
  for (std::uint32_t il = 0; il < model.block_count; ++il) {
    const model::LayerFacts* layer = il < model.layers.size() ? &model.layers[il] : nullptr;
    const bool loaded = layer == nullptr || !layer->mtp || config.mtp;
    const std::uint64_t weights =
        loaded && il < model.layer_weight_bytes.size() ? model.layer_weight_bytes[il] : 0;
    const int device = where.device_of[il];
    const std::uint64_t cache = plan::layer_cache_bytes(model, config, plan, il);
    if (const int gpu = listed.head_gpu_of(device); gpu >= 0) {
      plan::DevicePart& part = out.nodes[listed.head_index].gpus[static_cast<std::size_t>(gpu)];
      part.layers.push_back(il);
      part.weights_bytes += weights;
      part.cache_bytes += cache;
    } else {
      NodePart& part = out.nodes[listed.node_of(device)];
      part.layers.push_back(il);
      part.weights_bytes += weights;
      part.cache_bytes += cache;
    }
    if (device >= 0) {
      use.device_used[static_cast<std::size_t>(device)] = true;
    } else {
      use.head_cpu_layers = true;
    }
  }
  const int output = where.output_device();
  if (const int gpu = listed.head_gpu_of(output); gpu >= 0) {
    plan::DevicePart& part = out.nodes[listed.head_index].gpus[static_cast<std::size_t>(gpu)];
    part.output_layer = true;
    part.weights_bytes += model.output_weight_bytes;
  } else {
    NodePart& output_part = out.nodes[listed.node_of(output)];
    output_part.output_layer = true;
    output_part.weights_bytes += model.output_weight_bytes;
  }
  if (output >= 0) {
    use.device_used[static_cast<std::size_t>(output)] = true;
  } else {
    use.head_cpu_layers = true;
  }
  return use;
}

// Compute buffers: each device that holds a layer sizes its part of the graph (modelled as
// the whole graph's device buffer, as for discrete GPUs); the MTP draft context's on the
// device of the MTP block. The head keeps the inputs (and, with layers on its CPU, their
// part of the graph).
void add_compute_buffers(NodePlan& out, const model::ModelFacts& model,
                         const plan::PlanConfig& config, const plan::MemoryPlan& plan,
                         const plan::LayerAssignment& where, const NodeDevices& listed,
                         const DeviceUse& use) {
  const plan::BufferPlan buffers = offloaded_buffers(model, config, plan);
  const int mtp_device =
      model.has_mtp() && config.mtp ? where.device_of[model.main_layer_count] : -2;
  for (std::size_t d = 0; d < listed.devices.size(); ++d) {
    if (!use.device_used[d]) {
      continue;
    }
    std::uint64_t compute = buffers.main.compute_device;
    if (static_cast<int>(d) == mtp_device) {
      compute += buffers.mtp.compute_device;
    }
    if (const int gpu = listed.head_gpu_of(static_cast<int>(d)); gpu >= 0) {
      out.nodes[listed.head_index].gpus[static_cast<std::size_t>(gpu)].compute_bytes += compute;
    } else {
      out.nodes[listed.node_of_device[d]].compute_bytes += compute;
    }
  }
  NodePart& head_part = out.nodes[listed.head_index];
  head_part.compute_bytes += buffers.main.compute_host + buffers.mtp.compute_host;
  if (use.head_cpu_layers || listed.devices.empty()) {
    head_part.compute_bytes += buffers.main.compute_device;
    if (mtp_device == -1) {
      head_part.compute_bytes += buffers.mtp.compute_device;
    }
  }
}

// The projector: on a discrete GPU of the head when it runs on one of them (CUDA0, or -mmdev's
// device; its input image stays in host memory), else in the head's own memory (a GB10's one
// pool, --no-mmproj-offload, or a GPU the head does not use for layers, not planned apart).
void add_head_projector(NodePart& head, const plan::MemoryPlan& plan) {
  const std::uint64_t bytes = plan.projector_bytes + plan.projector_compute_bytes;
  plan::DevicePart* gpu = nullptr;
  if (plan.projector && plan.projector->on_device) {
    const std::string& name = plan.projector->device.empty() ? "CUDA0" : plan.projector->device;
    const auto found = std::find_if(head.gpus.begin(), head.gpus.end(),
                                    [&name](const plan::DevicePart& g) { return g.name == name; });
    gpu = found == head.gpus.end() ? nullptr : &*found;
  }
  if (gpu == nullptr) {
    head.weights_bytes += plan.projector_bytes;
    head.compute_bytes += plan.projector_compute_bytes;
    return;
  }
  const std::uint64_t host = std::min(plan.projector->host_compute_bytes, bytes);
  gpu->projector_bytes = bytes - host;
  head.compute_bytes += host;
}

// A discrete GPU of the head that holds anything gets a CUDA context (what comes with the first
// prompts, cuBLAS and its pool, counted as on one machine), and its total.
void size_head_gpu(plan::DevicePart& gpu, const plan::MemoryPlan& plan) {
  if (!gpu.layers.empty() || gpu.output_layer || gpu.projector_bytes > 0) {
    gpu.runtime_bytes = plan.runtime.device;
    gpu.service_bytes = plan.runtime.device - plan.runtime.device_at_load;
  }
  gpu.total_bytes = gpu.weights_bytes + gpu.cache_bytes + gpu.compute_bytes + gpu.runtime_bytes +
                    gpu.projector_bytes;
}

// The processes: rpc-server on each worker (a CUDA worker holds a CUDA context too), the
// head's llama-server as the plan's runtime for its backend, with the projector and the
// head's host memory beside the buffers.
void add_processes(NodePlan& out, const model::ModelFacts& model, const plan::MemoryPlan& plan,
                   const NodeBudgets& budgets, std::size_t head_index) {
  for (std::size_t w = 0; w < head_index; ++w) {
    NodePart& part = out.nodes[w];
    // In service: the same whether or not the warm-up loads cuBLAS.
    part.runtime_bytes = part.free_is_total
                             ? kCpuWorkerRuntimeBytes
                             : plan::runtime_memory(model, plan::PlanBackend::cuda).total();
  }
  NodePart& head_part = out.nodes[head_index];
  head_part.runtime_bytes = plan.runtime.host + kRpcClientBytes;
  if (!budgets.head_devices.empty() && head_part.gpus.empty()) {
    head_part.runtime_bytes += plan.runtime.device;  // one pool: the GPU's runtime is host memory
  }
  add_head_projector(head_part, plan);
  for (plan::DevicePart& gpu : head_part.gpus) {
    size_head_gpu(gpu, plan);
  }
  const std::uint64_t host_extra = plan.output_bytes + plan.cache_ram_bytes + plan.overhead_bytes;
  const std::uint64_t cut =
      plan.calibration_bytes < 0 ? static_cast<std::uint64_t>(-plan.calibration_bytes) : 0;
  head_part.host_bytes = plan.calibration_bytes < 0
                             ? (host_extra > cut ? host_extra - cut : 0)
                             : host_extra + static_cast<std::uint64_t>(plan.calibration_bytes);
}

// The plan's sums and verdicts, one budget (a node's memory, or a head GPU's) at a time.
struct NodeVerdicts {
  NodePlan& out;
  std::int64_t least = std::numeric_limits<std::int64_t>::max();

  void add(const std::string& name, std::uint64_t total, std::optional<std::uint64_t> available,
           std::optional<std::int64_t> margin, bool fits) {
    out.total_bytes += total;
    if (!available) {
      out.budgets_known = false;
      out.fits = false;
      return;
    }
    out.available_bytes += *available;
    if (!fits) {
      out.fits = false;
      if (out.first_short.empty()) {
        out.first_short = name;
      }
    }
    if (*margin < least) {
      least = *margin;
      out.tightest = name;
    }
  }
};

// Each node's totals and verdict, and the plan's: whether all fit, the first short, the
// tightest. A head's discrete GPUs are judged each on its own, after its host part.
void judge_nodes(NodePlan& out, const plan::MemoryPlan& plan, std::size_t head_index) {
  out.budgets_known = true;
  out.fits = true;
  NodeVerdicts verdicts{out};
  for (std::size_t n = 0; n < out.nodes.size(); ++n) {
    NodePart& part = out.nodes[n];
    part.buffer_bytes = part.weights_bytes + part.cache_bytes + part.compute_bytes;
    if (n == head_index) {
      part.buffer_bytes += plan.output_bytes;
    }
    part.load_bytes = part.buffer_bytes + part.runtime_bytes;
    part.total_bytes = part.weights_bytes + part.cache_bytes + part.compute_bytes +
                       part.runtime_bytes + part.host_bytes;
    judge_node(part);
    verdicts.add(part.node, part.total_bytes, part.available_bytes, part.margin_bytes, part.fits);
    for (plan::DevicePart& gpu : part.gpus) {
      part.buffer_bytes += gpu.weights_bytes + gpu.cache_bytes + gpu.compute_bytes;
      judge_node(gpu);
      part.fits = part.fits && gpu.fits;
      verdicts.add(part.node + " " + gpu.name, gpu.total_bytes, gpu.available_bytes,
                   gpu.margin_bytes, gpu.fits);
    }
  }
}

}  // namespace

NodePlan plan_nodes(const model::ModelFacts& model, const plan::PlanConfig& config,
                    const plan::MemoryPlan& plan, const NodeBudgets& budgets) {
  NodePlan out;
  const NodeDevices listed = list_nodes(out, budgets);
  out.layer_count = model.block_count + 1;
  out.gpu_layers =
      config.gpu_layers ? std::min(*config.gpu_layers, out.layer_count) : out.layer_count;
  const plan::LayerAssignment where = plan::assign_layers(model.block_count, config.gpu_layers,
                                                          config.tensor_split, listed.devices);
  const DeviceUse use = place_node_layers(out, model, config, plan, where, listed);
  add_compute_buffers(out, model, config, plan, where, listed, use);
  add_processes(out, model, plan, budgets, listed.head_index);
  judge_nodes(out, plan, listed.head_index);
  return out;
}

std::optional<std::string> rpc_buffer_endpoint(std::string_view buffer_name) {
  if (buffer_name.substr(0, 3) != "RPC" || buffer_name.size() < 6 || buffer_name.back() != ']') {
    return std::nullopt;
  }
  std::uint32_t index = 0;
  const char* begin = buffer_name.data() + 3;
  const char* end = buffer_name.data() + buffer_name.size();
  const auto [stop, ec] = std::from_chars(begin, end, index);
  if (ec != std::errc{} || stop == begin || *stop != '[') {
    return std::nullopt;
  }
  const auto open = static_cast<std::size_t>(stop - buffer_name.data());
  const std::string_view endpoint = buffer_name.substr(open + 1, buffer_name.size() - open - 2);
  if (endpoint.empty()) {
    return std::nullopt;
  }
  return std::string(endpoint);
}

}  // namespace gb10tune::rpc
