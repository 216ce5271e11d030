// Discrete GPUs: which layers llama.cpp puts on which device, and each device's share of the
// memory plan checked against that device's own free memory. The rules follow llama.cpp
// (2026-08, commit 3f545be), llama_model_base::load_tensors:
//  - layers 0 … n_layer_all-1 (MTP blocks included) and the output layer (index n_layer_all)
//    are assigned in order; with -ngl N the last N of these n_layer_all+1 go to the GPUs
//    (i_gpu_start = max(n_layer_all + 1 − N, 0)), the rest and the token embedding stay on the
//    CPU; so -ngl 1 offloads the output layer only;
//  - the offloaded ones are split by --tensor-split, or, when it is unset or all zero, by each
//    device's free memory: cumulative fractions `splits`, and layer il goes to the first device
//    whose fraction exceeds (il − i_gpu_start) / N (std::upper_bound);
//  - each layer's KV cache (and recurrent state) sits on its layer's device (offload_kqv on);
//  - with a tied output the output layer holds a duplicate of token_embd.
// The multimodal projector (tools/mtmd/clip.cpp, clip_ctx) is not placed by these rules: its
// weights and compute buffer go to --mmproj-device (-mmdev) when given, else to the first GPU
// of ggml's device registry (CUDA0, whatever --device and --main-gpu say), and stay in host
// memory with --no-mmproj-offload (or -mmdev none).
// On an integrated GPU (GB10) there is one pool and none of this applies: the caller keeps
// the single MemAvailable budget.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/gpu/gpu_info.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::plan {

// The default per-GPU reserve: llama.cpp's own fit keeps 1024 MiB free on each device
// (common_fit_params, --fit-target).
inline constexpr std::uint64_t kDefaultGpuReserveBytes = 1ull << 30;

// One GPU the server will use, in llama.cpp's device order.
struct GpuBudget {
  std::string name;                         // "CUDA0": llama.cpp's device name
  std::string description;                  // "NVIDIA GeForce RTX 4090", for messages
  std::optional<std::uint64_t> free_bytes;  // free memory now (NVML); nullopt: unknown
  std::uint64_t reserve_bytes = kDefaultGpuReserveBytes;
  std::optional<std::uint64_t> total_bytes{};  // its memory (NVML); nullopt: unknown
  std::string pci_bus_id{};                    // "0000:01:00.0": how verify finds it in NVML
  // free − reserve (never below 0); nullopt when the free memory is unknown.
  std::optional<std::uint64_t> available_bytes() const {
    if (!free_bytes) {
      return std::nullopt;
    }
    return *free_bytes > reserve_bytes ? *free_bytes - reserve_bytes : 0;
  }
};

// How the extra llama-server arguments place layers: --tensor-split / -ts (proportions,
// "3,1" or "3/1") and --device / -dev ("CUDA0,CUDA1"; "none": no GPU); and the projector:
// --mmproj-device / -mmdev ("CUDA1"; "none": host memory).
struct LayerPlacement {
  std::vector<float> tensor_split;   // empty: by free memory
  std::vector<std::string> devices;  // empty: every GPU
  std::string projector_device;      // "": the first GPU (CUDA0)
};

// Reads the placement from llama-server arguments (`-ts 3,1`, `--tensor-split=3,1`, …). An
// Error (usage) for a proportion that is not a number.
Expected<LayerPlacement> parse_placement(const std::vector<std::string>& args);

// The discrete GPUs llama-server will use, in CUDA order, named as llama.cpp names them
// ("CUDA<i>"), each with NVML's free memory (matched by PCI bus id; unknown when NVML did not
// report it) and `reserve`. Empty when there is no GPU or any GPU is integrated (GB10: one
// pool, MemAvailable is the budget, K19). An Error (usage) for a --device name that is not
// one of the GPUs.
Expected<std::vector<GpuBudget>> gpu_budgets(const gpu::GpuReport& devices,
                                             const gpu::NvmlReport& nvml,
                                             const std::vector<std::string>& selected,
                                             std::uint64_t reserve);

// Where each of the n_layer_all + 1 layers (the last one is the output layer) goes: an index
// into the GPU list, or -1 for the CPU.
struct LayerAssignment {
  std::vector<int> device_of;  // n_layer_all + 1 entries
  int output_device() const { return device_of.empty() ? -1 : device_of.back(); }
};

// The first of the n_layer_all + 1 layers that -ngl `gpu_layers` (nullopt: all) offloads,
// i_gpu_start of llama_model_base::load_tensors: the layers below it stay on the CPU.
std::uint32_t first_gpu_layer(std::uint32_t n_layer_all, std::optional<std::uint32_t> gpu_layers);

// Whether the tensors of `layer` (a block index, ModelFacts::kInputLayer, kOutputLayer or
// kUnloaded) are loaded and on the CPU when the layers from `first_gpu` on are offloaded: the
// input layer always, MTP blocks only with `mtp`, unloaded blocks never.
bool cpu_holds_layer(const model::ModelFacts& model, bool mtp, std::int64_t layer,
                     std::uint32_t first_gpu);

// Assigns layers as llama_model_base::load_tensors does. `gpu_layers` is -ngl (nullopt: all),
// `tensor_split` the --tensor-split proportions (empty or all zero: by free memory, where an
// unknown free memory counts as equal shares), `gpus` the devices in use.
LayerAssignment assign_layers(std::uint32_t n_layer_all, std::optional<std::uint32_t> gpu_layers,
                              const std::vector<float>& tensor_split,
                              const std::vector<GpuBudget>& gpus);

// One GPU's part of the plan.
struct DevicePart {
  std::string name;                   // "CUDA0"
  std::string description;            // the device's name
  std::string pci_bus_id;             // "" when unknown
  std::vector<std::uint32_t> layers;  // block indices on it (the output layer not included)
  bool output_layer = false;          // holds the output layer (output.weight, output_norm)
  std::uint64_t weights_bytes = 0;    // its layers' tensors (+ the output layer's)
  std::uint64_t cache_bytes = 0;      // KV, recurrent state and MTP KV of its layers
  std::uint64_t compute_bytes = 0;    // its compute buffer(s)
  std::uint64_t runtime_bytes = 0;    // CUDA context, kernels, library workspaces
  std::uint64_t service_bytes = 0;  // of runtime_bytes: what comes with the first prompts (cuBLAS)
  std::uint64_t projector_bytes = 0;             // mmproj weights + compute, when it went here
  std::uint64_t total_bytes = 0;                 // all of the above
  std::optional<std::uint64_t> free_bytes;       // free memory now
  std::uint64_t reserve_bytes = 0;               // kept free on it
  std::optional<std::uint64_t> available_bytes;  // free − reserve
  std::optional<std::int64_t> margin_bytes;      // available − total
  bool fits = false;                             // false also when the budget is unknown
};

// The host's part: what stays in system memory.
struct HostPart {
  std::vector<std::uint32_t> layers;  // block indices left on the CPU
  bool output_layer = false;          // the output layer stayed on the CPU
  // token_embd + CPU layers (+ output layer if on the CPU), less the repacked originals that
  // do not stay resident
  std::uint64_t weights_bytes = 0;
  // Offloaded tensors inside the file range the CPU's tensors span: llama.cpp keeps that range
  // mapped (the log's CPU_Mapped buffer), and their pages, read for the upload, stay resident.
  std::uint64_t mapped_extra_bytes = 0;
  std::uint64_t repack_bytes = 0;      // CPU_REPACK: repacked copies of the CPU's weights
  std::uint64_t cache_bytes = 0;       // KV/recurrent state of the CPU layers
  std::uint64_t buffers_bytes = 0;     // pinned host compute buffers (CUDA_Host) + output buffers
  std::uint64_t projector_bytes = 0;   // mmproj weights + compute, when kept in host memory
  std::uint64_t runtime_bytes = 0;     // the process and the CUDA libraries in host memory
  std::uint64_t service_bytes = 0;     // of runtime_bytes: what comes with the first prompts
  std::uint64_t cache_ram_bytes = 0;   // the prompt cache
  std::uint64_t overhead_bytes = 0;    // --overhead
  std::int64_t calibration_bytes = 0;  // learned correction, counted on the host side
  std::uint64_t total_bytes = 0;
  std::optional<std::uint64_t> available_bytes;  // MemAvailable − reserve
  std::optional<std::int64_t> margin_bytes;
  bool fits = false;
};

// The plan split over the devices: one line per GPU that holds layers, and the host.
struct DevicePlan {
  std::uint32_t gpu_layers = 0;   // -ngl as planned (n_layer_all + 1 = all)
  std::uint32_t layer_count = 0;  // n_layer_all + 1 (the output layer included)
  // every GPU in use, also those that got no layer; then the projector's GPU when it is not
  // among them (no layers, its CUDA context and the projector)
  std::vector<DevicePart> gpus;
  HostPart host;
  bool budgets_known = false;  // every GPU's free memory and MemAvailable are known
  bool fits = false;           // every part fits (false when a budget is unknown)
  std::string tightest;        // the part with the least margin ("CUDA0", "host")
  // When a GPU does not fit: the largest -ngl with which every GPU fits (0: none), with the
  // same split.
  std::optional<std::uint32_t> max_gpu_layers_that_fit;
};

}  // namespace gb10tune::plan
