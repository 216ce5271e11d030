// What the llama-server process holds besides its weights, caches and llama.cpp's buffers, and
// when: its own code and heap (tokenizer, HTTP server, threads) and, on CUDA, the CUDA context,
// loaded kernels and library workspaces on the device plus the CUDA libraries and driver state
// on the host. Measured: CPU runs here, CUDA runs on an H200 (docs/memory-plan.md).
#pragma once

#include <cstdint>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/compute_buffers.hpp"

namespace gb10tune::plan {

// The process's own memory, planned as it holds it in service, after it has served prompts:
// the CUDA runtime loads cuBLAS (handle, workspace, its kernels) and grows its memory pool by
// then, which an idle process after load may not have done yet (the `_at_load` figures).
struct RuntimeMemory {
  std::uint64_t host = 0;            // resident in host memory (RSS), in service
  std::uint64_t device = 0;          // on the GPU (NVML per process), in service
  std::uint64_t host_at_load = 0;    // the least of `host` a process holds before its first prompt
  std::uint64_t device_at_load = 0;  // the least of `device` before its first prompt
  std::uint64_t total() const { return host + device; }
  // What only appears once the server has served prompts.
  std::uint64_t after_first_prompts() const {
    return host - host_at_load + device - device_at_load;
  }
};

// The attention settings of the warm-up decode that decide which CUDA kernels it runs.
struct WarmupAttention {
  bool flash_attention = true;
  gguf::GgmlType cache_k = gguf::GgmlType::f16;
  gguf::GgmlType cache_v = gguf::GgmlType::f16;
  std::uint32_t first_gpu_layer = 0;  // blocks from this index on are offloaded (first_gpu_layer)
};

// Whether llama-server's warm-up decode (common_init_from_params: BOS and EOS, two tokens) on
// the CUDA backend hands a product to cuBLAS, so that cuBLAS is loaded at load rather than with
// the first prompts. Without flash attention an offloaded attention layer multiplies K by Q and
// V by the scores; ggml's CUDA backend (ggml_cuda_mul_mat, 3f545be) takes its own kernels for
// an f16/bf16 cache only when their shapes allow: at two tokens the vector kernel needs one
// (mmvf on Ampere and later), the tiled one (mmf) a K head size that is a multiple of 64 and V
// rows of 32; anything else goes to cuBLAS. A quantized cache takes mmvq. Measured on an H200:
// K heads of 8-80 values without flash attention held 66-100 MiB more after load, heads of 64,
// 128, 256 and 576 did not (docs/memory-plan.md).
bool warmup_loads_cublas(const model::ModelFacts& model, const WarmupAttention& attention);

// What of the launch changes the CUDA runtime's share: whether the warm-up loads cuBLAS
// (warmup_loads_cublas: it comes at load instead of with the first prompts), whether blocks stay
// in host memory (-ngl below the layer count), flash attention, the micro-batch and the cells
// an attention reads (the memory pool's temporaries in service).
struct RuntimeShape {
  bool warmup_cublas = false;
  bool partial_offload = false;
  bool flash_attention = true;
  std::uint32_t ubatch = 512;
  std::uint64_t attention_cells = 0;  // the most KV cells one attention reads (n_kv at its fullest)
};

// The CUDA memory pool a server grows to in service (ggml_cuda_pool_vmm keeps its high-water
// mark): the temporaries of the largest product, per micro-batch.
std::uint64_t cuda_pool_in_service(const model::ModelFacts& model, const RuntimeShape& shape);

// The runtime memory of a server for `model` on `backend` in `shape`.
RuntimeMemory runtime_memory(const model::ModelFacts& model, PlanBackend backend,
                             RuntimeShape shape = {});

}  // namespace gb10tune::plan
