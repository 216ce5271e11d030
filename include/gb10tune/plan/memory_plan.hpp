// The memory plan: what a llama-server configuration will take, figure by figure, against
// MemAvailable minus a reserve (K13, exact instead of 64 KiB per token). The KV and recurrent
// figures follow llama.cpp's own rules (2026-08, commit 3f545be):
//  - llama_context: n_ctx is padded to 256; with a unified KV pool (-kvu) one stream holds all
//    n_ctx cells, otherwise each of the n_seq_max streams holds pad(n_ctx / n_seq_max, 256).
//  - llama_kv_cache: per KV layer, K = row_size(type_k, n_embd_k_gqa) × cells × streams and V
//    likewise (V at the widest layer's width when stored transposed, i.e. without flash
//    attention); sliding-window layers (llama_kv_cache_iswa) hold
//    pad(min(cells, n_swa × (unified ? n_seq_max : 1) + n_ubatch), 256) cells.
//  - llama_memory_recurrent: max(1, n_seq_max) × (1 + n_rs_seq) rows of conv + SSM state per
//    recurrent layer, n_rs_seq = --spec-draft-n-max when MTP drafting needs rollback.
//  - draft-mtp creates a second context for the MTP blocks with the target's n_ctx, n_seq_max
//    and KV layout, and the draft cache types (-ctkd/-ctvd).
//  - compute and output buffers per context and backend: compute_buffers.hpp; the process's
//    own memory: runtime_memory.hpp.
//  - the multimodal projector's weights and compute buffer: projector_plan.hpp.
//  - the CPU backend's repacked copy of quantized weights (CPU_REPACK): cpu_repack.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/compute_buffers.hpp"
#include "gb10tune/plan/cpu_repack.hpp"
#include "gb10tune/plan/device_plan.hpp"
#include "gb10tune/plan/projector_plan.hpp"
#include "gb10tune/plan/reserve.hpp"
#include "gb10tune/plan/runtime_memory.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::plan {

// The explicit extra margin on top of the modelled buffers and runtime: the largest part of
// a loaded llama-server's memory the model did not explain in the runs checked was 20-40 MiB
// (qwen35 on the CPU build, its MTP draft context); docs/memory-plan.md has every run.
inline constexpr std::uint64_t kDefaultOverheadBytes = 32ull << 20;
// llama.cpp's bookkeeping per KV cache cell (llama_kv_cells, 3f545be): pos (int32), ext (two
// int32), shift (int32) and seq (std::bitset<LLAMA_MAX_SEQ = 256>): 48 bytes, host memory.
inline constexpr std::uint64_t kKvCellMetadataBytes = 48;

// A llama-server configuration, as far as memory is concerned.
struct PlanConfig {
  std::uint64_t ctx_total = 0;  // -c: cells of all slots together; 0 = the model's native context
  std::uint32_t slots = 1;      // -np (n_seq_max)
  bool kv_unified = false;      // -kvu: one pool shared by all slots
  gguf::GgmlType cache_k = gguf::GgmlType::f16;        // -ctk
  gguf::GgmlType cache_v = gguf::GgmlType::f16;        // -ctv
  bool flash_attention = true;                         // -fa on: V is not stored transposed
  bool swa_full = false;                               // --swa-full
  std::uint32_t ubatch = 512;                          // -ub
  std::uint32_t batch = 2048;                          // -b
  bool mtp = false;                                    // --spec-type draft-mtp
  std::uint32_t draft_n_max = 3;                       // --spec-draft-n-max
  gguf::GgmlType draft_cache_k = gguf::GgmlType::f16;  // -ctkd
  gguf::GgmlType draft_cache_v = gguf::GgmlType::f16;  // -ctvd
  std::uint64_t cache_ram_bytes = 8192ull << 20;       // --cache-ram (MiB on the command line)
  std::optional<model::ProjectorFacts> projector;      // --mmproj file; none without one
  bool projector_offload = true;                       // false: --no-mmproj-offload
  std::string projector_device;                        // -mmdev; "": the first GPU (CUDA0)
  std::uint64_t overhead_bytes = kDefaultOverheadBytes;
  PlanBackend backend = PlanBackend::cpu;   // what the server's build will run on
  std::optional<std::uint32_t> gpu_layers;  // -ngl; nullopt: every layer (llama.cpp's -1)
  std::vector<float> tensor_split;          // --tensor-split; empty: by free memory
  std::string backend_reason;               // why (choose_backend), for the report
  // What the CPU backend repacks and how the weights load (cpu_repack.hpp); by default the
  // build's features are unknown and the plan counts every type some CPU repacks.
  RepackSetting repack;
  // A correction learned from earlier runs (measured − planned at load, see calibration.hpp),
  // added to the total once bounded for this plan (bounded_correction); 0 and "" when there is
  // none. `calibration_note`: why recorded runs were not applied, for the plan's notes.
  std::int64_t calibration_bytes = 0;
  std::string calibration_source;
  std::string calibration_note;
  // launch --force on an architecture gb10tune has no layer rules for: plan an estimate (the
  // weights from the tensor sizes plus overhead_bytes, caches and buffers unknown) instead of
  // refusing.
  bool estimate_unsupported = false;
};

// "cpu" or "cuda".
std::string_view backend_name(PlanBackend backend);

// What the machine offers.
struct PlanBudget {
  std::optional<std::uint64_t> mem_available;  // nullopt: unknown (the plan cannot be checked)
  std::uint64_t reserve_bytes = kDefaultReserveBytes;
  // The discrete GPUs a CUDA server will use, in llama.cpp's order. Empty: one pool (no GPU,
  // or an integrated GPU such as GB10 whose budget is MemAvailable, K19). With GPUs listed
  // and the CUDA backend, device buffers are planned against each GPU's free memory and only
  // host buffers against MemAvailable.
  std::vector<GpuBudget> gpus;
  // The GPU the projector goes to (CUDA0, or -mmdev), when it is not among `gpus` (with
  // --device CUDA1 the projector still goes to CUDA0); nullopt: it is among them, or none.
  std::optional<GpuBudget> projector_gpu;
};

// Every figure of the plan, in bytes, each a named field.
struct MemoryPlan {
  // The cache geometry llama.cpp derives from the configuration.
  std::uint64_t n_ctx = 0;           // after padding to 256 (and rounding to whole slots)
  std::uint64_t ctx_per_slot = 0;    // n_ctx_seq: cells one slot can use
  std::uint32_t streams = 1;         // 1 with -kvu, else slots
  std::uint64_t full_cells = 0;      // cells per stream of the full-attention layers
  std::uint64_t swa_cells = 0;       // cells per stream of the sliding-window layers
  std::uint32_t recurrent_rows = 0;  // recurrent state rows per layer

  // The model's tensors (MTP blocks only with MTP on), less the repacked originals that do
  // not stay resident (RepackPlan::released_bytes).
  std::uint64_t weights_bytes = 0;
  std::uint64_t repack_bytes = 0;  // the CPU_REPACK buffer: repacked copies of CPU weights
  // Offloaded tensors whose pages stay mapped in host memory beside their GPU copies (partial
  // offload: mapped_extra below).
  std::uint64_t mapped_extra_bytes = 0;
  RepackPlan repack;                          // what is repacked and why
  std::uint64_t projector_bytes = 0;          // mmproj weights
  std::uint64_t projector_compute_bytes = 0;  // mmproj compute buffer (clip graph)
  std::optional<ProjectorPlan> projector;     // where and how, when there is a projector
  std::uint64_t kv_full_bytes = 0;            // main context, full-attention layers
  std::uint64_t kv_swa_bytes = 0;             // main context, sliding-window layers
  std::uint64_t recurrent_bytes = 0;          // main context, recurrent state
  std::uint64_t mtp_kv_bytes = 0;             // the MTP draft context's KV cache
  std::uint64_t compute_bytes = 0;            // compute buffers of every context and backend
  BufferPlan buffers;                         // compute and output buffers per context and buffer
  std::uint64_t output_bytes = 0;             // the output (logits/embeddings) buffers
  std::uint64_t runtime_bytes = 0;            // the process's own and the backend's runtime memory
  RuntimeMemory runtime;                      // runtime_bytes split into host and device
  std::uint64_t kv_cells_bytes = 0;           // of runtime.host: the KV caches' cell metadata
  std::uint64_t overhead_bytes = 0;           // the explicit extra margin (--overhead)
  std::uint64_t cache_ram_bytes = 0;          // the prompt cache in host memory, at its limit
  // Correction learned from earlier runs of the same key (architecture, build, backend and the
  // configuration's shape: measured − planned at load), bounded for this plan; 0 when there is
  // none. `calibration_source` says where it came from.
  std::int64_t calibration_bytes = 0;
  std::string calibration_source;
  std::uint64_t total_bytes = 0;  // all of the above

  std::optional<std::uint64_t> available_bytes;  // MemAvailable − reserve
  std::optional<std::int64_t> margin_bytes;      // available − total
  bool fits = false;

  // When it does not fit: the most slots that fit at this context per slot, and the largest
  // context per slot that fits with this many slots (0: none does).
  std::uint32_t max_slots_that_fit = 0;
  std::uint64_t max_ctx_per_slot_that_fits = 0;

  std::vector<std::string> notes;  // what the user should know (MTP off, context clamped, …)

  // An estimate for an unsupported architecture (PlanConfig::estimate_unsupported): only the
  // weights and the overhead are counted; the KV cache, recurrent state and the compute and
  // output buffers are unknown (0 here), so nothing about them is checked.
  bool estimate = false;

  // Discrete GPUs: the plan per device and host (budget.gpus not empty, CUDA backend). Then
  // `fits` is the device plan's verdict and available/margin are the host's.
  std::optional<DevicePlan> devices;
  // Spread over machines with --rpc: the budgets are per node (rpc::plan_nodes), not here.
  bool per_node = false;

  // What the server allocates while it loads, as modelled (no margin, no prompt cache, no
  // calibration): the figure a measurement of the running process is compared with.
  std::uint64_t load_bytes() const {
    return weights_bytes + mapped_extra_bytes + repack_bytes + projector_bytes +
           projector_compute_bytes + cache_bytes() + compute_bytes + output_bytes + runtime_bytes;
  }

  // KV + recurrent + MTP KV: everything that grows with context and slots.
  std::uint64_t cache_bytes() const {
    return kv_full_bytes + kv_swa_bytes + recurrent_bytes + mtp_kv_bytes;
  }
};

// The plan's total: every figure plus the calibration (which may be negative), never below 0.
// The one place the total is summed.
std::uint64_t total_of(const MemoryPlan& plan);

// Computes the plan of `config` for `model` against `budget`. An Error (exit code 2) for a
// configuration llama.cpp would refuse: zero slots, an unsupported architecture, a cache type
// that does not divide the model's head widths, MTP on a model without an MTP head.
Expected<MemoryPlan> make_plan(const model::ModelFacts& model, const PlanConfig& config,
                               const PlanBudget& budget);

// The KV cache, recurrent state and MTP KV of block `il` alone, as the plan's geometry sizes
// them (the sum over all blocks is plan.cache_bytes()).
std::uint64_t layer_cache_bytes(const model::ModelFacts& model, const PlanConfig& config,
                                const MemoryPlan& plan, std::uint32_t il);

// The bytes of loaded, offloaded tensors that lie inside the file range spanned by the tensors
// the CPU keeps in its mapped buffer (token_embd, the CPU blocks, the output layer when it
// stays; not those repacked into a copy, `repacked` per model.tensor_spans entry): llama.cpp
// unmaps only what is outside [first, last) of that range (llama_model_loader::load_all_data),
// so those pages, read to upload them, stay in the process.
std::uint64_t mapped_extra(const model::ModelFacts& model, const PlanConfig& config,
                           std::uint32_t first_gpu, const std::vector<bool>& repacked);

// Splits `plan` over `budget.gpus` and the host as llama.cpp places its buffers (see
// device_plan.hpp), and checks each part against its own budget.
DevicePlan split_over_devices(const model::ModelFacts& model, const PlanConfig& config,
                              const MemoryPlan& plan, const PlanBudget& budget);

// The cache types llama.cpp accepts for -ctk/-ctv: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl,
// q5_0, q5_1. nullopt for anything else.
std::optional<gguf::GgmlType> parse_cache_type(std::string_view name);

}  // namespace gb10tune::plan
