#include "gb10tune/plan/memory_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <tuple>

#include "gb10tune/plan/calibration.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::plan {

using gguf::GgmlType;
using model::KvScope;

namespace {

// llama_context pads n_ctx (and each slot's share) to this many cells.
constexpr std::uint64_t kCellPad = 256;

std::uint64_t pad(std::uint64_t value, std::uint64_t step) {
  return (value + step - 1) / step * step;
}

// The context: n_ctx, the cells per slot and per sliding window, the recurrent rows.
Status plan_context(const model::ModelFacts& model, const PlanConfig& config,
                    std::uint32_t rollback, MemoryPlan& plan) {
  // An unset context is the training context per stream: llama-server's fit step (on by
  // default) asks for n_ctx_train x n_streams before the context is created.
  const std::uint64_t streams_wanted = config.kv_unified ? 1 : config.slots;
  const std::uint64_t requested =
      config.ctx_total == 0 ? model.context_length * streams_wanted : config.ctx_total;
  if (requested == 0) {
    return Error{fmt::format("{} does not say its training context ({}.context_length); pass "
                             "the context size explicitly",
                             model.source, model.architecture),
                 ExitCode::usage};
  }
  plan.n_ctx = pad(requested, kCellPad);
  if (config.kv_unified) {
    plan.ctx_per_slot = plan.n_ctx;
    plan.streams = 1;
  } else {
    plan.ctx_per_slot = pad(plan.n_ctx / config.slots, kCellPad);
    if (plan.n_ctx / config.slots == 0) {
      return Error{fmt::format("a context of {} cells cannot be split into {} slots", plan.n_ctx,
                               config.slots),
                   ExitCode::usage};
    }
    plan.n_ctx = plan.ctx_per_slot * config.slots;  // llama.cpp rounds to whole slots
    plan.streams = config.slots;
  }
  plan.full_cells = plan.ctx_per_slot;
  const std::uint64_t window_cells =
      static_cast<std::uint64_t>(model.sliding_window) * (config.kv_unified ? config.slots : 1) +
      config.ubatch;
  plan.swa_cells =
      config.swa_full ? plan.full_cells : pad(std::min(plan.full_cells, window_cells), kCellPad);
  plan.recurrent_rows = std::max(1u, config.slots) * (1 + rollback);
  return {};
}

// The caches: KV of the full-attention and sliding-window layers (and of the MTP draft
// context), recurrent state.
Status plan_caches(const model::ModelFacts& model, const PlanConfig& config, MemoryPlan& plan) {
  const bool v_transposed = !config.flash_attention;
  const auto full = model.kv_bytes_per_cell(KvScope::full_attention, config.cache_k, config.cache_v,
                                            v_transposed);
  const auto swa = model.kv_bytes_per_cell(KvScope::sliding_window, config.cache_k, config.cache_v,
                                           v_transposed);
  if (!full || !swa) {
    return Error{(full ? swa : full).error().message, ExitCode::usage};
  }
  plan.kv_full_bytes = *full * plan.full_cells * plan.streams;
  plan.kv_swa_bytes = *swa * plan.swa_cells * plan.streams;
  plan.recurrent_bytes = model.recurrent_bytes_per_sequence * plan.recurrent_rows;
  if (config.mtp) {
    const auto mtp = model.kv_bytes_per_cell(KvScope::mtp, config.draft_cache_k,
                                             config.draft_cache_v, v_transposed);
    if (!mtp) {
      return Error{mtp.error().message, ExitCode::usage};
    }
    plan.mtp_kv_bytes = *mtp * plan.full_cells * plan.streams;
  }
  return {};
}

// llama_context: n_batch = min(n_ctx, -b) for causal models.
std::uint32_t batch_of(const PlanConfig& config, const MemoryPlan& plan) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(config.batch, plan.n_ctx));
}

// The main context's graph (the draft context's has the same n_ctx, n_seq_max and batch
// sizes).
GraphShape main_graph_shape(const model::ModelFacts& model, const PlanConfig& config,
                            const MemoryPlan& plan, std::uint32_t rollback,
                            std::uint32_t first_gpu) {
  GraphShape shape;
  shape.slots = config.slots;
  shape.ubatch = config.ubatch;
  shape.batch = config.batch;
  shape.n_ctx = plan.n_ctx;
  shape.full_cells = plan.full_cells;
  shape.swa_cells = plan.swa_cells;
  shape.streams = plan.streams;
  shape.cache_k = config.cache_k;
  shape.cache_v = config.cache_v;
  shape.flash_attention = config.flash_attention;
  shape.outputs_max =
      server_outputs_max(batch_of(config, plan), config.slots, config.mtp ? config.draft_n_max : 0);
  shape.state_snapshots = 1 + rollback;
  if (config.backend == PlanBackend::cuda) {
    // -ngl below the layer count: the first blocks (and with -ngl 0 the output layer) stay in
    // host memory, and the scheduler copies what their offloaded ops read (split_copies.hpp).
    shape.host_blocks = std::min(first_gpu, model.block_count);
    shape.host_output = first_gpu > model.block_count;
  }
  return shape;
}

// Compute and output buffers of the main context and, with draft-mtp, of the draft context
// (n_outputs_max = slots).
void plan_buffers(const model::ModelFacts& model, const PlanConfig& config, const GraphShape& shape,
                  MemoryPlan& plan) {
  const std::uint32_t n_batch = batch_of(config, plan);
  plan.buffers.main = context_buffers(model, shape, config.backend, false);
  if (config.mtp) {
    // The target keeps every token's pre-norm hidden state for the draft (embeddings_nextn,
    // unmasked: n_embd x n_batch).
    plan.buffers.main.output += std::uint64_t{model.embedding_length} * n_batch * 4;
    GraphShape draft = shape;
    draft.outputs_max = server_outputs_max(n_batch, config.slots, 0);
    plan.buffers.mtp = context_buffers(model, draft, config.backend, true);
    plan.buffers.mtp.output += std::uint64_t{model.embedding_length} * draft.outputs_max * 4;
  }
  plan.compute_bytes = plan.buffers.compute();
  plan.output_bytes = plan.buffers.output();
}

// What the runtime holds beside the buffers: CUDA context and libraries, the KV cells'
// metadata.
void plan_runtime(const model::ModelFacts& model, const PlanConfig& config, const GraphShape& shape,
                  std::uint32_t first_gpu, MemoryPlan& plan) {
  const bool warmup_cublas = config.backend == PlanBackend::cuda &&
                             warmup_loads_cublas(model, {config.flash_attention, config.cache_k,
                                                         config.cache_v, first_gpu});
  // Without flash attention one attention reads every cell of its stream (all of them: -kvu).
  plan.runtime =
      runtime_memory(model, config.backend,
                     {.warmup_cublas = warmup_cublas,
                      .partial_offload = shape.host_blocks > 0,
                      .flash_attention = config.flash_attention,
                      .ubatch = config.ubatch,
                      .attention_cells = plan.streams == 1 ? plan.n_ctx : plan.full_cells});
  // llama_kv_cells: per cell of every KV cache (full attention, sliding window, the MTP draft
  // context's) a position, a 2-D position, a shift and a 256-sequence bitset, host memory
  // written when the cache is created: 27 MiB a cache at 589,824 cells.
  const std::uint64_t caches =
      (model.kv_layer_count(KvScope::full_attention) > 0 ? plan.full_cells : 0) +
      (model.kv_layer_count(KvScope::sliding_window) > 0 ? plan.swa_cells : 0) +
      (config.mtp ? plan.full_cells : 0);
  plan.kv_cells_bytes = kKvCellMetadataBytes * caches * plan.streams;
  plan.runtime.host += plan.kv_cells_bytes;
  plan.runtime.host_at_load += plan.kv_cells_bytes;  // written when the caches are created
  plan.runtime_bytes = plan.runtime.total();
}

// The weights: what is loaded, what the CPU repacks, what stays mapped beside GPU copies, the
// projector.
void plan_weights(const model::ModelFacts& model, const PlanConfig& config, std::uint32_t first_gpu,
                  MemoryPlan& plan) {
  plan.weights_bytes =
      model.weight_bytes - model.unloaded_weight_bytes - (config.mtp ? 0 : model.mtp_weight_bytes);
  // The weights the CPU computes with (all on the CPU backend; with CUDA the layers -ngl
  // leaves) may be repacked into a copy of their own.
  plan.repack = plan_cpu_repack(model, config.repack, [&](std::int64_t layer) {
    return cpu_holds_layer(model, config.mtp, layer, first_gpu);
  });
  plan.weights_bytes -= plan.repack.released_bytes;
  plan.repack_bytes = plan.repack.buffer_bytes;
  // With blocks left in host memory, offloaded tensors inside the CPU's mapped range stay
  // resident beside their GPU copies (the device plan's host part counts them the same way).
  if (config.backend == PlanBackend::cuda) {
    plan.mapped_extra_bytes = mapped_extra(model, config, first_gpu, plan.repack.repacked);
  }
  if (config.projector) {
    // clip_ctx: the GPU backend unless --no-mmproj-offload (or no GPU backend in the build):
    // -mmdev's device, else the first GPU.
    plan.projector = plan_projector(*config.projector, config.flash_attention,
                                    config.projector_offload && config.backend == PlanBackend::cuda,
                                    config.projector_device);
    plan.projector_bytes = plan.projector->weights_bytes;
    plan.projector_compute_bytes =
        plan.projector->compute_bytes + plan.projector->host_compute_bytes;
  }
}

// Computes every figure of `config` except the fit search.
Expected<MemoryPlan> compute(const model::ModelFacts& model, const PlanConfig& config) {
  MemoryPlan plan;
  if (config.slots == 0) {
    return Error{"the number of slots (-np) must be at least 1", ExitCode::usage};
  }
  const std::uint32_t rollback = config.mtp && model.recurrent_rollback ? config.draft_n_max : 0;
  if (Status context = plan_context(model, config, rollback, plan); !context) {
    return context.error();
  }
  if (Status caches = plan_caches(model, config, plan); !caches) {
    return caches.error();
  }
  // The first block a GPU holds: with CUDA what -ngl leaves, on the CPU backend none.
  const std::uint32_t first_gpu = config.backend == PlanBackend::cuda
                                      ? first_gpu_layer(model.block_count, config.gpu_layers)
                                      : model.block_count + 1;
  const GraphShape shape = main_graph_shape(model, config, plan, rollback, first_gpu);
  plan_buffers(model, config, shape, plan);
  plan_runtime(model, config, shape, first_gpu, plan);
  plan_weights(model, config, first_gpu, plan);
  plan.overhead_bytes = config.overhead_bytes;
  plan.cache_ram_bytes = config.cache_ram_bytes;
  // The correction learned elsewhere, bounded for this plan (calibration.hpp).
  plan.calibration_bytes = bounded_correction(plan, config.backend, config.calibration_bytes);
  plan.calibration_source = config.calibration_source;
  if (plan.calibration_bytes != config.calibration_bytes) {
    plan.calibration_source += fmt::format(
        "; learned {:+.2f} MiB, bounded to {:.0f}% of the figure at load and to no less than the "
        "buffers llama.cpp allocates",
        static_cast<double>(config.calibration_bytes) / 1048576.0, kCalibrationBoundPercent);
  }
  plan.total_bytes = total_of(plan);
  return plan;
}

}  // namespace

std::string_view backend_name(PlanBackend backend) {
  return backend == PlanBackend::cuda ? "cuda" : "cpu";
}

std::uint64_t total_of(const MemoryPlan& plan) {
  const std::uint64_t sum = plan.load_bytes() + plan.overhead_bytes + plan.cache_ram_bytes;
  // The calibration may be negative (the model overstated the process); the total never is.
  if (plan.calibration_bytes < 0) {
    const auto cut = static_cast<std::uint64_t>(-plan.calibration_bytes);
    return sum > cut ? sum - cut : 0;
  }
  return sum + static_cast<std::uint64_t>(plan.calibration_bytes);
}

namespace {

// Fills the verdict of `plan` against `budget`: one pool (total vs MemAvailable − reserve), or
// with discrete GPUs each device and the host against their own budgets.
void judge(const model::ModelFacts& model, const PlanConfig& config, const PlanBudget& budget,
           MemoryPlan& plan) {
  if (!budget.mem_available && budget.gpus.empty()) {
    return;
  }
  if (config.backend == PlanBackend::cuda && !budget.gpus.empty()) {
    plan.devices = split_over_devices(model, config, plan, budget);
    plan.available_bytes = plan.devices->host.available_bytes;
    plan.margin_bytes = plan.devices->host.margin_bytes;
    plan.fits = plan.devices->fits;
    return;
  }
  if (!budget.mem_available) {
    return;
  }
  const std::uint64_t available = *budget.mem_available > budget.reserve_bytes
                                      ? *budget.mem_available - budget.reserve_bytes
                                      : 0;
  plan.available_bytes = available;
  plan.margin_bytes =
      static_cast<std::int64_t>(available) - static_cast<std::int64_t>(plan.total_bytes);
  plan.fits = plan.total_bytes <= available;
}

bool fits(const model::ModelFacts& model, const PlanConfig& config, const PlanBudget& budget) {
  auto plan = compute(model, config);
  if (!plan) {
    return false;
  }
  judge(model, config, budget, *plan);
  return plan->fits;
}

// The most slots (at the same context per slot) and the largest context per slot (with the
// same slots) that fit in `available`.
void search_fit(const model::ModelFacts& model, const PlanConfig& config, const PlanBudget& budget,
                MemoryPlan& plan) {
  for (std::uint32_t slots = config.slots; slots >= 1; --slots) {
    PlanConfig smaller = config;
    smaller.slots = slots;
    smaller.ctx_total = plan.ctx_per_slot * (config.kv_unified ? 1 : slots);
    if (config.kv_unified) {
      // One pool: fewer slots shrink only the per-slot state, the pool stays the size asked.
      smaller.ctx_total = plan.n_ctx;
    }
    if (fits(model, smaller, budget)) {
      plan.max_slots_that_fit = slots;
      break;
    }
  }
  std::uint64_t low = 0;  // in units of kCellPad cells per slot
  std::uint64_t high = plan.ctx_per_slot / kCellPad;
  while (low < high) {
    const std::uint64_t mid = (low + high + 1) / 2;
    PlanConfig shorter = config;
    shorter.ctx_total = mid * kCellPad * (config.kv_unified ? 1 : config.slots);
    if (fits(model, shorter, budget)) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  plan.max_ctx_per_slot_that_fits = low * kCellPad;
}

// The checks llama_init_from_model makes on the quantized cache types of one context: a
// quantized V cache needs flash attention, and with flash attention a quantized type's block
// must divide every main layer's head size.
Status check_cache_types(const model::ModelFacts& model, const PlanConfig& config, GgmlType cache_k,
                         GgmlType cache_v) {
  const gguf::GgmlTypeInfo& k = gguf::ggml_type_info(cache_k);
  const gguf::GgmlTypeInfo& v = gguf::ggml_type_info(cache_v);
  if (v.quantized && !config.flash_attention) {
    return Error{fmt::format("a quantized V cache ({}) needs flash attention; use --flash-attn on "
                             "or an unquantized V cache",
                             v.name),
                 ExitCode::usage};
  }
  if (!config.flash_attention) {
    return {};
  }
  for (const model::LayerFacts& layer : model.layers) {
    if (layer.mtp || layer.head_count_kv == 0 || (!layer.main_kv && !layer.sliding_window)) {
      continue;
    }
    const std::uint32_t head_k = layer.k_width / layer.head_count_kv;
    const std::uint32_t head_v = layer.v_width / layer.head_count_kv;
    for (auto [info, head, which] : {std::tuple{&k, head_k, "K"}, std::tuple{&v, head_v, "V"}}) {
      if (info->quantized && head % info->block_size != 0) {
        return Error{fmt::format("{} cache type {} has blocks of {} values, which do not divide "
                                 "the head size {} of layer {}: llama.cpp refuses it; use f16, "
                                 "bf16 or a type whose block divides {}",
                                 which, info->name, info->block_size, head, layer.index, head),
                     ExitCode::usage};
      }
    }
  }
  return {};
}

// The plan of an unsupported architecture under --force: the geometry llama.cpp derives
// from the configuration, the weights from the tensor sizes and the user's overhead; no
// cache, state or buffer figure (unknown), no device split, no fit search.
Expected<MemoryPlan> estimate_plan(const model::ModelFacts& model, const PlanConfig& config,
                                   const PlanBudget& budget) {
  PlanConfig plain = config;
  plain.mtp = false;
  plain.projector.reset();
  auto plan = compute(model, plain);
  if (!plan) {
    return plan;
  }
  plan->estimate = true;
  plan->kv_full_bytes = 0;
  plan->kv_swa_bytes = 0;
  plan->recurrent_bytes = 0;
  plan->mtp_kv_bytes = 0;
  plan->buffers = BufferPlan{};
  plan->compute_bytes = 0;
  plan->output_bytes = 0;
  plan->runtime.host -= plan->kv_cells_bytes;  // no cache is known either
  plan->runtime.host_at_load -= plan->kv_cells_bytes;
  plan->kv_cells_bytes = 0;
  plan->runtime_bytes = plan->runtime.total();
  plan->calibration_bytes = 0;
  plan->calibration_source.clear();
  if (config.projector) {
    plan->projector_bytes = config.projector->weight_bytes;  // its compute buffer is unknown
  }
  plan->total_bytes = total_of(*plan);
  plan->notes.push_back(fmt::format(
      "ESTIMATE: {}. Counted: the weights from the file's tensor sizes ({}){} and --overhead "
      "({}) for everything else; the KV cache, recurrent state and compute buffers are "
      "unknown, so this plan checks none of them",
      model.unsupported_reason, format_bytes(plan->weights_bytes),
      config.projector
          ? fmt::format(", the projector's weights ({})", format_bytes(plan->projector_bytes))
          : std::string(),
      format_bytes(plan->overhead_bytes)));
  if (budget.mem_available) {
    const std::uint64_t available = *budget.mem_available > budget.reserve_bytes
                                        ? *budget.mem_available - budget.reserve_bytes
                                        : 0;
    plan->available_bytes = available;
    plan->margin_bytes =
        static_cast<std::int64_t>(available) - static_cast<std::int64_t>(plan->total_bytes);
    plan->fits = plan->total_bytes <= available;
  }
  if (!budget.gpus.empty()) {
    plan->notes.push_back(
        "ESTIMATE: GPU memory is not checked per device for an unsupported architecture");
  }
  return plan;
}

}  // namespace

std::optional<GgmlType> parse_cache_type(std::string_view name) {
  constexpr std::array kAllowed{GgmlType::f32,    GgmlType::f16,  GgmlType::bf16,
                                GgmlType::q8_0,   GgmlType::q4_0, GgmlType::q4_1,
                                GgmlType::iq4_nl, GgmlType::q5_0, GgmlType::q5_1};
  const gguf::GgmlTypeInfo* info = gguf::ggml_type_from_name(name);
  if (info == nullptr ||
      std::find(kAllowed.begin(), kAllowed.end(), info->type) == kAllowed.end()) {
    return std::nullopt;
  }
  return info->type;
}

Expected<MemoryPlan> make_plan(const model::ModelFacts& model, const PlanConfig& config,
                               const PlanBudget& budget) {
  if (!model.supported && config.estimate_unsupported) {
    return estimate_plan(model, config, budget);
  }
  if (!model.supported) {
    return Error{fmt::format("{}: {}; the memory plan needs to know how llama.cpp lays out its "
                             "caches. To start it anyway, give --force --overhead SIZE (SIZE: "
                             "what its KV cache, state and compute buffers will need); the plan "
                             "is then an estimate of the weights plus SIZE",
                             model.source, model.unsupported_reason),
                 ExitCode::usage};
  }
  if (config.mtp && !model.has_mtp()) {
    if (model.unloaded_block_count > 0) {
      return Error{fmt::format("{}: its {} nextn block{} {} not loaded by llama.cpp for "
                               "architecture '{}' (it skips their tensors), so draft-mtp has no "
                               "head to draft with; drop --mtp",
                               model.source, model.unloaded_block_count,
                               model.unloaded_block_count == 1 ? "" : "s",
                               model.unloaded_block_count == 1 ? "is" : "are", model.architecture),
                   ExitCode::usage};
    }
    return Error{fmt::format("{} has no MTP head ({}.nextn_predict_layers is 0): draft-mtp "
                             "speculative decoding needs one; drop --mtp",
                             model.source, model.architecture),
                 ExitCode::usage};
  }
  if (const Status types = check_cache_types(model, config, config.cache_k, config.cache_v);
      !types) {
    return types.error();
  }
  // The MTP draft context is a llama_context of its own, checked the same way.
  if (config.mtp) {
    if (const Status types =
            check_cache_types(model, config, config.draft_cache_k, config.draft_cache_v);
        !types) {
      return Error{"MTP draft context: " + types.error().message, ExitCode::usage};
    }
  }
  auto plan = compute(model, config);
  if (!plan) {
    return plan;
  }
  // llama-server caps each slot at the training context: cells past slots x that are never used.
  if (model.context_length > 0 && plan->ctx_per_slot > model.context_length) {
    const std::uint64_t usable =
        std::min<std::uint64_t>(plan->n_ctx, std::uint64_t{config.slots} * model.context_length);
    plan->notes.push_back(fmt::format(
        "{} cells for {} slot(s) of at most {} each, the model's training context, where "
        "llama-server caps a slot: {} cells are never used",
        plan->n_ctx, config.slots, model.context_length, plan->n_ctx - usable));
  }
  if (model.has_mtp() && !config.mtp) {
    plan->notes.push_back(
        "the model has an MTP head but draft-mtp is off: its blocks are not "
        "loaded and no draft context is made (K4 recommends it on)");
  }
  if (plan->projector && !plan->projector->checked) {
    plan->notes.push_back("mmproj compute buffer: " + plan->projector->basis +
                          "; --overhead covers what it misses");
  }
  if (!config.flash_attention) {
    plan->notes.push_back(
        "flash attention off: V is stored transposed at the widest layer's "
        "width");
  }
  if (!config.calibration_note.empty()) {
    plan->notes.push_back(config.calibration_note);
  }
  judge(model, config, budget, *plan);
  const bool checked =
      plan->devices ? plan->devices->budgets_known : plan->available_bytes.has_value();
  if (checked && !plan->fits) {
    search_fit(model, config, budget, *plan);
  }
  return plan;
}

}  // namespace gb10tune::plan
